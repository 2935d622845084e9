"""The model catalog (SPEC CAT-1..CAT-4): feed documents read into entries, merged into a model's facts,
and the Discover list. Pure: the prober fetches the feeds, the gateway shows what they hold."""
