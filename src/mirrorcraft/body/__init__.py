"""The semantic skill body: thirteen skills over a WorldState and an active RuleSet."""
