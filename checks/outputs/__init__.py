"""What a run writes: trace text and reports, ITF files, the design review report, the lifecycle
diagram, progress lines, and the files they go to."""
