"""The phases of one research iteration: THINK (specs and eager writes), CRITIC (one review per
patched spec), EXPERIMENT (overlays, smoke gate, one parallel wave), DISTILL (verdicts, lessons,
knowledge) and the REFLECT meta-phase over the intervention axes. `_loop` drives them."""
