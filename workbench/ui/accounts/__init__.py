"""The Accounts view: profiles, credential forms, MFA prompts."""
