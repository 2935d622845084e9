"""The admin JSON API's domain: configuration rules, views, and the one writer of config events."""
