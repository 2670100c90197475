from shapefuzz.cli import main

main()
