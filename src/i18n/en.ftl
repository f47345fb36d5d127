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

check-answer-right = answer "{ $answer }" is right
check-answer-wrong = answer "{ $answer }" is not right
check-attempts-locked = attempt { $used } of { $limit }: the answer is locked
check-attempts-of = attempt { $used } of { $limit }
check-answered = { $count ->
    [one] answered once
   *[other] answered { $count } times
}
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

## reset's plan and what it did (src/engine/reset_plan.rs, src/engine/reset.rs, src/run.rs)
reset-delete-created-by-lab = delete { $object } (created by the lab)
reset-delete-created-by-learner = delete { $object } (created by the learner after start)
reset-part-labels = labels
reset-part-annotations = annotations
reset-restore = restore { $parts } of { $object } (existed before start)
reset-keep-existed = keep { $object } (existed before start)
reset-keep-holds-foreign = keep { $object } (it still holds objects that are not the lab's: { $held })
reset-more = { $count } more
reset-keep-owned = keep { $object } (lab { $lab } owns it)
reset-keep-learner-object = keep { $object } (created by the learner; the lab keeps learner objects)
reset-hand-over = hand { $object } over to lab { $lab } (it still uses it)
reset-label-removed = { $key } removed
reset-restore-node-labels = restore labels of Node { $node } ({ $changes })
reset-restore-configmap = restore ConfigMap { $namespace }/{ $name } to its recorded data
reset-delete-configmap-new = delete ConfigMap { $namespace }/{ $name } (it did not exist before the lab)
reset-apply-stage = apply stage { $stage } again
reset-delete-inventory = delete ConfigMap { $namespace }/{ $name } (the inventory: the lab is no longer started)
reset-delete-inventory-and-namespace = delete ConfigMap { $namespace }/{ $name } (the inventory: the lab is no longer started) and Namespace { $namespace } (nothing else is in it)
reset-kept-changed-hands = kept { $object }: it changed hands since the plan was made
reset-would = reset { $lab } would:
reset-will = reset { $lab } will:
reset-proceed = proceed? [y/N]
reset-done = reset { $lab }:
reset-needs-yes = reset { $lab } deletes objects; stdin is not a terminal, so pass --yes to confirm (or --dry-run to see the plan)
reset-cancelled = reset cancelled

## lists
list-separator = { ", " }
list-separator-and = { ", " }
list-and = { $init } and { $last }

## start and answer (src/run.rs)
start-done = { $count ->
    [one] started { $lab }: 1 object applied
   *[other] started { $lab }: { $count } objects applied
}
start-done-variant = { $count ->
    [one] started { $lab } (variant { $variant }): 1 object applied
   *[other] started { $lab } (variant { $variant }): { $count } objects applied
}
start-variant-prompt = lab { $lab } is started with another variant whose breakage is applied; starting a different one replaces it and forgets the answers. proceed? [y/N]
start-variant-prompt-revealed = lab { $lab } is started with another variant (variant { $running }, asked for { $wanted }) whose breakage is applied; starting a different one replaces it and forgets the answers. proceed? [y/N]
start-variant-change-revealed = lab { $lab } is started with variant { $running } whose breakage is applied; starting { $wanted } replaces it and forgets the answers: pass --yes to proceed (stdin is not a terminal)
start-cancelled = start cancelled
start-incomplete-before = the start of lab { $lab } did not finish (it stopped before its first stage finished): run `lab-runner start { $lab }` again to resume it
start-incomplete-after = the start of lab { $lab } did not finish (it stopped after stage { $stages }): run `lab-runner start { $lab }` again to resume it
start-waiting = waiting: { $condition } { $kind } { $target }
start-condition-rolled-out = rolled out
start-condition-available = available
start-condition-established = established
start-condition-stalled = stalled as intended
start-collision = { $count ->
    [one] start { $lab } refused before changing anything: { $objects } already exists and this lab did not create it; delete or rename it, use another cluster, or declare it under `adopt:` in the lab's stage if taking it over is intended
   *[other] start { $lab } refused before changing anything: { $objects } already exist and this lab did not create them; delete or rename them, use another cluster, or declare them under `adopt:` in the lab's stage if taking them over is intended
}
answer-no-task = lab { $lab } has no task "{ $task }"
answer-not-a-quiz = task { $task } is not a quiz: it is graded from the cluster by `check`
answer-not-started = lab { $lab } is not started on this cluster: run `lab-runner start { $lab }` first
answer-not-recorded = { $reason }; the answer is not recorded
answer-recorded = answer for { $task } recorded; `lab-runner check { $lab }` grades it
answer-recorded-attempt = answer for { $task } recorded (attempt { $attempt } of { $limit }); `lab-runner check { $lab }` grades it

## demo and selftest (src/demo.rs)
demo-simulator-at = simulator at { $endpoint } ({ $speed }x speed)
demo-reference-solution = the reference solution, task by task
demo-command-running = … still running after { $seconds }s
demo-command-took = … it took { $seconds }s
selftest-bad-speed = --speed { $speed }: the speed factor must be a number above 0
selftest-fixture-applied = { $count ->
    [one] applied 1 object of { $dir }
   *[other] applied { $count } objects of { $dir }
}
selftest-variants-passed = selftest { $lab }: { $passed } of { $count } variants passed

## sim (src/sim_command.rs)
sim-stale-pid = note: removed the stale pid file in { $dir } (process { $pid } is gone)
sim-running = simulator running at { $endpoint } (pid { $pid })
sim-status-running = simulator running
sim-store-kept = kept the existing store
sim-store-seeded = { $count ->
    [one] seeded 1 object
   *[other] seeded { $count } objects
}
sim-serving = simulator serving { $endpoint } (pid { $pid }; { $store })
sim-contexts = contexts: { $admin } (admin), { $viewer } (read-only)
sim-press-ctrl-c = Press Ctrl-C to stop.
sim-stopped = simulator stopped
sim-stopped-pid = simulator stopped (pid { $pid })

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
error-kubeconfig = cannot use the kubeconfig { $path }: { $reason } (`lab-runner sim up` starts a simulated cluster and writes one; --kubeconfig FILE names another)
error-unknown-context = the kubeconfig { $path } has no context "{ $context }"; its contexts: { $known }
error-unreachable = cannot reach the cluster at { $server } (context { $context }): { $reason }; is it running? (`lab-runner sim up` starts the simulated one)
error-variant-change = lab { $lab } is started with another variant whose breakage is applied; starting a different one replaces it and forgets the answers: pass --yes to proceed (or `lab-runner reset { $lab }` first)
error-unknown-lab = no lab named "{ $id }"; known labs: { $known }
error-invalid-bundle = lab bundle { $bundle } has { $count ->
    [one] 1 problem
   *[other] { $count } problems
}
error-invalid-course = the course file { $file } has { $count ->
    [one] 1 problem
   *[other] { $count } problems
}
error-not-a-bundle = { $path }: not a lab bundle (no lab.yaml)
