"""``kepcheck sweep``: every small cluster within declared bounds, up to isomorphism, each checked
through the run pipeline, with a resumable store."""
