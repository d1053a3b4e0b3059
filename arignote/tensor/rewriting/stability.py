"""Rules that replace numerically unstable forms by stable ones (the stabilize stage): log1p, expm1, softplus, log-sigmoid, logsumexp, log-softmax..."""
