"""What every app may use and that knows no app: stored texts, validators, the outbound HTTP client."""
