"""The symbolic engines: bounded model checking and k-induction with Z3, built from the model's own
action definitions on symbolic states."""
