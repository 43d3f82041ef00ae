"""How the model is checked: engines, the common result and trace types, reports, the CLI."""
