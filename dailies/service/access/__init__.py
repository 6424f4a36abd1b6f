"""Who may call and how often: keys (file, environment, database), shared secrets, rate limits."""
