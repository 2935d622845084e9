"""What a configuration write may say: one rule per write, pure over the folded `ConfigState`, shared by
every writer (the gateway's admin API, the prober's checks and onboarding) so none re-derives a rule."""
