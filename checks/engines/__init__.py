"""The engines that judge a model: explicit (breadth-first, every kind of property), liveness
(eventually-properties on the explored graph) and random (Hypothesis walks), with its differential checks."""
