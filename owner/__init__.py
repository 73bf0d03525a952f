"""Every page an owner uses: overview and onboarding (dashboard), voice and experiments (tuning), tests, usage
and members (insights). Three apps under one roof, each keeping its label, tables and URL names."""
