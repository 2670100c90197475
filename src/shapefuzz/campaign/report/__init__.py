"""What a campaign shows: its summary (text, Markdown, JSON), the HTML dashboard with its plots, the live views and each cause's issue text."""
