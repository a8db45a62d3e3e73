"""The provider contract and what surrounds it: discovery, accounts, credentials, the catalog, boot scripts."""
