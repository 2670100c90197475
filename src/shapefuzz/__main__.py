from shapefuzz.console import main

main()
