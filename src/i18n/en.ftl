# lab-runner's own words, English. Every id here is in ja.ftl too, with the same placeholders
# (src/i18n/mod.rs tests both). Commands and Kubernetes' own messages are shown in backticks or
# quotes; verdict codes (PASS, FAIL, BLOCKED, ERROR) and column names stay as they are.

## check's report (src/report/mod.rs)
report-hint = hint { $tier }: { $text }
report-score = score { $score }/{ $total }
report-stuck = stuck? lab-runner check { $lab } --hint 1

## check --watch (src/report/live.rs, src/run.rs)
watch-summary = { $open ->
    [0] score { $score }/{ $total } — every task passes
    [one] score { $score }/{ $total } — 1 task to go
   *[other] score { $score }/{ $total } — { $open } tasks to go
}
watch-watching = watching { $lab } on { $context } (Ctrl-C to stop)
watch-listing = listing… { $watching }
watch-reconnecting = reconnecting { $feed }: { $reason }
watch-reconnecting-note = note: the watch on { $feed } is reconnecting ({ $reason }); its last objects are used
watch-ended = watch ended after { $seconds }s and { $evaluations }: { $ending }
watch-ended-regressed = watch ended after { $seconds }s and { $evaluations }: { $ending }; regressed: { $tasks }
watch-evaluations = { $count ->
    [one] { $count } evaluation
   *[other] { $count } evaluations
}
watch-all-pass = every task passes
watch-stopped = stopped
watch-timed-out = timed out after { $timeout }

## check's evidence frame (src/engine/check.rs)
check-needs = needs { $task } ({ $status })
check-not-graded = not graded
check-held-both = held at both observations, { $apart } apart
check-observation-first = observation 1 of 2 (at start)
check-observation-second = observation 2 of 2 (after { $apart })
check-no-answer = no answer yet: lab-runner answer { $lab } { $task } VALUE
check-no-answer-choices = no answer yet: lab-runner answer { $lab } { $task } VALUE, with VALUE one of { $values }

## status (src/engine/status.rs, src/run.rs)
status-daemonset = { $daemonset } (current revision { $hash })
status-revision-current = { $hash } (current)
status-revision-old = { $hash } (old)
status-not-wanted = { $state } (not wanted here)
status-desired = nodes that should run a pod (selector, affinity, taints)
status-current = of those, nodes that have a pod
status-ready = nodes whose pod is Ready
status-up-to-date = nodes whose pod runs the current template
status-available = nodes whose pod has been Ready for minReadySeconds
status-misscheduled = pods on nodes that should not run one
status-unavailable = DESIRED - AVAILABLE: what blocks a maxUnavailable rollout
status-no-pod = no pod
status-no-pod-expected = no pod (the lab expects one on this node; the DaemonSet does not target it)
status-gpu-nodes = GPU nodes (config chosen by the label { $label })
status-no-gpu-nodes = no node matches
status-quotas = team quotas
status-no-quota = no ResourceQuota
status-not-started = lab { $lab }: not started on this cluster
status-instructor = lab { $lab }: variant { $variant }, stages done [{ $stages }], facts captured [{ $facts }] (stored hashed)
status-needs-target = status needs a lab or --daemonset NAMESPACE/NAME
status-bad-daemonset = --daemonset wants NAMESPACE/NAME, got "{ $given }"

## start and answer (src/run.rs)
start-done = { $count ->
    [one] started { $lab }: 1 object applied
   *[other] started { $lab }: { $count } objects applied
}
start-done-variant = { $count ->
    [one] started { $lab } (variant { $variant }): 1 object applied
   *[other] started { $lab } (variant { $variant }): { $count } objects applied
}
answer-recorded = answer for { $task } recorded; `lab-runner check { $lab }` grades it

## lint's summary (src/run.rs)
lint-nothing = lint: no lab bundles to check
lint-clean = { $count ->
    [one] lint: 1 lab clean ({ $ids })
   *[other] lint: { $count } labs clean ({ $ids })
}
lint-problems = lint: { $problems ->
    [one] 1 problem
   *[other] { $problems } problems
} in { $failing ->
    [one] 1 lab
   *[other] { $failing } labs
} of { $labs }
lint-problems-course = lint: { $problems ->
    [one] 1 problem
   *[other] { $problems } problems
} in the course file
lint-problems-course-and-labs = lint: { $problems ->
    [one] 1 problem
   *[other] { $problems } problems
} in the course file and { $failing ->
    [one] 1 lab
   *[other] { $failing } labs
} of { $labs }

## errors (src/run.rs)
error-line = error: { $message }
