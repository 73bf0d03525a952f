"""Demo shop site, its static server and evaluation cases."""
