"""How the launch shapes of a claim are covered (docs/architecture.md): the strategies
(`strategies`: one symbolic maximal launch, or each shape enumerated), the check of one
shape (`one_shape`) and of the maximal launch (`symbolic_launch`), both running the stages of
`verifier.stages`, and the shape probes for a claim no strategy decides (`probes`). A new
strategy implements `base.Coverage` and takes its place in `verifier.equiv.strategies`."""
