"""Suite manifests -> datapacks and rule sheets; static route analysis; worldgen datapacks."""
