"""The review suite (SPEC T-1..T-6) as a domain library: the task format, the scoring rules, the seeder and
the recall that feeds ranking. Pure apart from reading task folders and repositories: no bus, no HTTP, and it
never runs code from a task or a repository. The prober drives passes with it; the CLI seeds with it."""
