# lab-runner's own words, English. Every id here is in ja.ftl too, with the same placeholders
# (src/i18n/mod.rs tests both). Commands and Kubernetes' own messages are shown in backticks or
# quotes; verdict codes (PASS, FAIL, BLOCKED, ERROR) and column names stay as they are.

## check's report (src/report/mod.rs)
report-hint = hint { $tier }: { $text }
report-score = score { $score }/{ $total }
report-variant = variant { $variant }
report-stuck = stuck? lab-runner check { $lab } --hint 1

## check --watch (src/report/live.rs, src/commands/check.rs)
watch-summary = { $open ->
    [0] score { $score }/{ $total } — every task passes
    [one] score { $score }/{ $total } — 1 task to go
   *[other] score { $score }/{ $total } — { $open } tasks to go
}
watch-watching = watching { $lab } on { $context } (Ctrl-C to stop)
watch-listing = listing… { $watching }
watch-reconnecting = reconnecting { $feed }: { $reason }
watch-reconnecting-note = note: the watch on { $feed } is reconnecting ({ $reason }); its last objects are used
watch-ended-all-pass = every task passes: the watch ended after { $duration } and { $evaluations }
watch-ended-stopped = the watch stopped after { $duration } and { $evaluations }
watch-ended-timed-out = the watch timed out after { $timeout } and { $evaluations }
watch-ended-regressed = { $ended }; regressed: { $tasks }
watch-evaluations = { $count ->
    [one] { $count } evaluation
   *[other] { $count } evaluations
}

## check's evidence frame (src/engine/check.rs)
check-needs = needs { $task } ({ $status })
check-not-graded = not graded
check-held-both = held at both observations, { $apart } apart
check-observation-first = observation 1 of 2 (at start)
check-observation-second = observation 2 of 2 (after { $apart })
check-no-answer = no answer yet: lab-runner answer { $lab } { $task } { $word }
check-no-answer-choices = no answer yet: lab-runner answer { $lab } { $task } { $word }, with { $word } one of { $values }
check-answer-placeholder = VALUE

check-stage-missing = stage { $stage } of lab { $lab } is not applied (a `reset --to-stage` stopped before it), so no task can be graded: `lab-runner reset { $lab }` applies every stage again
check-reveal-needs-key = `check { $lab } --reveal` is for the instructor: these credentials cannot read the lab's key, and what --reveal shows would answer a quiz
check-answer-right = answer "{ $answer }" is right
check-answer-wrong = answer "{ $answer }" is not right
check-attempts-locked = { $limit ->
    [one] one answer is allowed: no more answers are taken
   *[other] { $limit } answers are allowed: no more answers are taken
}
check-attempts-of = attempt { $used } of { $limit }
check-answered = { $count ->
    [one] answered once
   *[other] answered { $count } times
}
# The class board's quiz evidence, which never quotes an answer (src/engine/check.rs)
check-answer-right-concealed = answered: right
check-answer-wrong-concealed = answered: not right
check-no-answer-concealed = not answered yet
check-evidence-concealed = (not shown on the board: it could name an answer)
check-value-concealed = [answer]
## status (src/engine/status.rs, src/commands/status.rs)
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
status-unavailable = DESIRED − AVAILABLE: when it reaches maxUnavailable, the rollout stops
status-no-pod = no pod
status-no-pod-expected = no pod (the lab expects one on this node; the DaemonSet does not target it)
status-gpu-nodes = GPU nodes (config chosen by the label { $label })
status-no-gpu-nodes = no node matches
status-quotas = team quotas
status-no-quota = no ResourceQuota
status-not-started = lab { $lab } is not started on this cluster: `lab-runner start { $lab }` starts it
status-instructor = lab { $lab }: { $variant }, stages done: { $stages }, values recorded at start: { $facts } (stored hashed)
status-variant = variant { $variant }
status-variant-none = no variant
status-needs-target = status needs a lab or --daemonset NAMESPACE/NAME
status-bad-daemonset = --daemonset wants NAMESPACE/NAME, got "{ $given }"

## reset's plan and what it did (src/engine/reset_plan.rs, src/engine/reset.rs, src/commands/reset.rs)
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
reset-restore-node = restore Node { $node } as the first start found it: { $parts }
reset-node-labels = labels ({ $changes })
reset-node-resources = advertised resources ({ $changes })
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

## start and answer (src/commands/start.rs, src/commands/answer.rs)
start-done = { $count ->
    [one] started { $lab }: 1 object applied
   *[other] started { $lab }: { $count } objects applied
}
start-timed-out-reset = { $seen }. The cluster may have been changed since the lab started: `lab-runner reset { $lab }` starts it again from a clean state
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
start-condition-condition = { $condition } on
start-condition-event = an Event { $reason } about
start-condition-cel = `{ $expression }` to hold for
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

## demo and selftest (src/commands/demo.rs, src/commands/selftest.rs)
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

## sim (src/commands/sim.rs)
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

## lint's summary (src/commands/lint.rs)
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

## errors (src/commands/mod.rs)
error-line = error: { $message }
error-kubeconfig = cannot use the kubeconfig { $path }: { $reason } (`lab-runner sim up` starts a simulated cluster and writes one; --kubeconfig FILE names another)
error-unknown-context = the kubeconfig { $path } has no context "{ $context }"; its contexts: { $known }
error-unreachable = cannot reach the cluster at { $server } (context { $context }): { $reason }; is it running? (`lab-runner sim up` starts the simulated one)
error-variant-change = lab { $lab } is started with another variant whose breakage is applied; starting a different one replaces it and forgets the answers: pass --yes to proceed (or `lab-runner reset { $lab }` first)
error-unknown-lab = no lab named "{ $id }"; known labs: { $known }
error-unknown-built-in-lab = no lab named "{ $id }" is built in (built-in labs: { $known }); a lab bundle in a directory is read with `--labs DIR` or `LAB_RUNNER_LABS=DIR`
error-invalid-bundle = lab bundle { $bundle } has { $count ->
    [one] 1 problem
   *[other] { $count } problems
}
error-invalid-course = the course file { $file } has { $count ->
    [one] 1 problem
   *[other] { $count } problems
}
error-not-a-bundle = { $path }: not a lab bundle (no lab.yaml)

## Issue #19: grading's evidence, the loader's and lint's problems, the engine's errors, the
## selftest transcript and the demo (src/grade/**, src/lab/loader/**, src/engine/**, src/commands/demo.rs).
## Kubernetes' own messages are quoted in backticks.

## grading: matchers (src/grade/mod.rs, observed.rs, partial.rs, path.rs)
grade-no-expectations = the task has no expectations
grade-listing-failed = listing { $kind }: { $reason }
grade-unreadable = { $object } was listed but cannot be read ({ $reason }): it may be one of the objects this check is about, so it cannot be judged
grade-not-observed = { $kind } was not observed
grade-cannot-judge = { $reason }: cannot judge { $target }
grade-none-exists = no { $target } exists
grade-does-not-exist = { $object } does not exist
grade-object-matches = { $object }: matches
grade-object-detail = { $object }: { $detail }
grade-exists-expected-none = { $object } exists, expected none
grade-count = { $count } × { $target } observed, expected { $op } { $value }
grade-quantity-absent = { $object }: { $path } is absent, expected { $op } { $value }
grade-quantity-is = { $object }: { $path } is { $found }, expected { $op } { $value }
grade-cel-result = `{ $expression }` is { $result }
grade-cel-result-read = `{ $expression }` is { $result }: { $values }
grade-cel-value = { $selection } = { $value }
grade-cel-value-list = { $selection }: { $count ->
    [one] { $count } element
   *[other] { $count } elements
}
grade-cel-value-error = { $selection }: { $error }
grade-cel-failed = `{ $expression }` could not be evaluated: { $error }
grade-cel-not-bool = `{ $expression }` gave { $result }, not true or false
grade-cel-compile = `{ $expression }` does not compile: { $error }
grade-cel-ambiguous = { $target } selects { $count } objects (in several namespaces): give the target a namespace
grade-quantity-not-a-quantity = { $object }: { $path } is { $found }, not a quantity; expected { $op } { $value }
grade-error-missing-expected-file = expected file { $file } is not part of the bundle
grade-error-expected-source = give exactly one of `expected` and `expectedFile`
grade-error-undeclared-list = list at { $path } has no declared semantics: add it under `lists` as contains, exactly, each or none
grade-error-each-needs-one = list at { $path } is declared `each`: give exactly one expected element, which every observed element must match
grade-error-non-string-label = { $path } is not a string: label, annotation and node-selector values are strings (quote it)
grade-error-not-a-quantity = value { $value } is not a Kubernetes quantity
grade-error-hard-not-a-quantity = hard { $value } is not a Kubernetes quantity
grade-error-indexed-list-path = list path { $path } must not hold an index
grade-error-hash = cannot compute the revision hash of { $object }
target-named = { $target }
target-with-labels = { $target } with labels { $labels }
target-in-namespace = { $kind } in namespace { $namespace }
target-in-namespace-with-labels = { $kind } in namespace { $namespace } with labels { $labels }
partial-the-object = object
partial-present = { $path } is { $found }
partial-missing = { $path } is missing, expected { $expected }
partial-not-a-map = { $path } is { $found }, expected a map
partial-differs = { $path } is { $found }, expected { $expected }
partial-not-a-list = { $path } is { $found }, expected a list
partial-no-element = { $path } has no element matching { $item } (closest: { $closest })
partial-no-element-empty = { $path } has no element matching { $item } (the list is empty)
partial-length = { $path } has { $found } elements, expected exactly { $expected }
partial-each-empty = { $path } is empty or missing, expected every element to match
partial-none-expected = { $path } matches { $item }, expected no element to
path-invalid = invalid path { $path }: { $reason } (write keys separated by dots, `["key.with.dots"]` or `[N]`)
path-syntax-unclosed = unclosed `[`
path-syntax-empty-key = empty key
path-syntax-bad-bracket = `[…]` holds a number or a quoted key
path-syntax-trailing-dot = trailing `.`
path-syntax-dot-expected = `.` expected after `]`
path-syntax-empty-path = empty path
value-absent = absent
list-separator-clause = { "; " }

## grading: rollout and the nodes captured at start (src/grade/builtin.rs, captured.rs)
grade-rollout-counters = { $daemonset }: desired { $desired } current { $current } ready { $ready } up-to-date { $updated } available { $available }
grade-rollout-no-pod = node { $node }: no pod
grade-rollout-pod = node { $node }: pod { $pod } revision { $revision } image { $image } { $state }
grade-rollout-unwanted-pod = node { $node }: pod { $pod } runs where the DaemonSet no longer wants one
grade-rollout-old-revision = node { $node }: still on the old revision { $revision } ({ $state })
grade-rollout-new-pod = node { $node }: new pod { $pod } is { $state }
grade-rollout-unavailable = numberUnavailable is { $unavailable }
grade-rollout-desired-at-start = DESIRED is { $desired } but { $nodes } nodes matched the lab's node selector at start
grade-rollout-still-broken = the template is still the broken one
grade-rollout-template-untolerated = the template does not tolerate node { $node }'s taint { $taint }, so the DaemonSet does not run there
grade-rollout-template-not-selecting = the template's node selector, affinity or nodeName leaves out node { $node }
grade-rollout-template-too-big = the template asks for more than node { $node } has ({ $reasons })
grade-rollout-template-unreadable = the template's requests cannot be read: { $reason }
grade-rollout-pod-not-template = node { $node }: pod { $pod } runs { $found }, not the template's { $expected }: changed in place, it does not count
grade-rollout-no-start-nodes = the nodes this check covers were captured at start, and the lab's records do not hold them (the lab was not started here, or its records were removed): judging the nodes labelled now instead would not be honest; an instructor's `lab-runner reset` starts the lab again
grade-quiz-needs-key = the right answer is sealed with the lab's key, which these credentials cannot read: this quiz is graded with the instructor's (`lab-runner check` on the class host, or the class board)
records-tampered = the records of lab { $lab } were changed or removed outside lab-runner ({ $records }): grading them would not be honest; an instructor's `lab-runner reset { $lab }` starts the lab again
records-need-key = writing the lab's records needs its key (Secret { $secret }), which these credentials cannot read: this is for the instructor's credentials
action-record-answer = recording the answer to { $task }
action-read-key = reading the record key { $object }
action-write-key = writing the record key { $object }
grade-rollout-converged = converged: one revision everywhere, nothing unavailable
grade-rollout-not-converged = not converged: { $problem }
grade-rollout-not-stalled = not stalled: every node is settled
grade-rollout-stalled = stalled: { $problem }
grade-captured-recreated = node { $node } is not the node of that name at start (it was recreated)
grade-captured-no-longer-matches = node { $node } no longer matches { $selector }
grade-captured-cordoned = node { $node } is cordoned
grade-captured-gone = { $count ->
    [one] 1 node matching { $selector } at start no longer exists
   *[other] { $count } nodes matching { $selector } at start no longer exist
}
grade-captured-new = node { $node } did not match { $selector } at start: it does not count

## grading: quota, quiz, schedulable, device-plugin config (src/grade/builtin.rs, src/engine/check.rs)
grade-probe-not-sent = the over-quota probe was not sent
grade-probe-failed = the over-quota probe failed: { $reason }
grade-probe-admitted = an over-quota pod in { $namespace } (dryRun=All) was admitted
grade-probe-rejected = an over-quota pod in { $namespace } (dryRun=All) was rejected: `{ $message }`
probe-file-missing = { $file } is not part of the bundle
probe-not-an-object = { $file } is not an object
probe-request-failed = { $reason }
grade-pod-not-running = { $object } is not running and Ready ({ $phase })
grade-pod-node-missing = { $object } is bound to node { $node }, which does not exist
grade-pod-on-other-node = { $object } runs on node { $node }, which is not one of the nodes the task asks for
grade-pod-runs-held = { $object } runs on node { $node }, which advertises and holds what it asks for
grade-pod-node-cannot-hold = { $object } runs on node { $node }, which does not advertise or cannot hold what it asks for ({ $reasons }): it was bound past the scheduler, and a kubelet would not admit it
grade-quota-hard-not-a-quantity = hard value { $value } is not a quantity
grade-quota-hard-is = resourcequota { $quota }: hard { $resource } = { $hard }
grade-quota-hard-differs = resourcequota { $quota }: hard { $resource } is { $found }, expected { $expected }
grade-quota-hard-missing = resourcequota { $quota } sets no hard { $resource } (keys: { $keys })
grade-quota-scope-exempts = resourcequota { $quota } takes in only pods in scope { $scopes }: pods like the team's workloads (QoS class { $qos }, as the probe) are exempt from it
grade-quota-none = no ResourceQuota exists in namespace { $namespace }
grade-not-started = the lab has not been started on this cluster (no inventory)
grade-fact-not-captured = start did not capture the fact { $fact }; run `lab-runner start` again
grade-quiz-unjudgeable = the quiz names neither a fact nor accepted answers
grade-no-pod-matches = no pod matches { $target }
grade-pod-scheduled = { $object }: scheduled on node { $node }
grade-pod-not-scheduled = { $object }: not scheduled: `{ $message }`
grade-pod-not-scheduled-no-condition = { $object }: not scheduled: no PodScheduled=True condition
grade-pod-not-unschedulable-yet = { $object }: not unschedulable yet (no PodScheduled=False condition)
grade-unschedulable = { $object }: unschedulable: `{ $message }`
grade-unschedulable-other-reason = { $object }: unschedulable, but for another reason than { $reason }: `{ $message }`
grade-schedulable-no-pods = the schedulable check names neither `pods` nor `podFile`
grade-pod-file-missing = pod file { $file } is not part of the bundle
grade-pod-file-not-a-pod = pod file { $file } is not a Pod
grade-cannot-fit = cannot fit { $file }: { $reason }
grade-pod-file-fits = { $file } fits node(s) { $nodes }
grade-pod-file-fits-expected-none = { $file } fits node(s) { $nodes }, expected it to fit none
grade-plugin-no-node = no node matches the check's node selector
grade-plugin-no-label = node { $node }: no { $label } label
grade-plugin-not-a-key = node { $node }: { $label }={ $config } is not a key of ConfigMap { $configmap } [{ $keys }]
grade-plugin-other-config = node { $node }: { $label }={ $config }, expected { $expected }
grade-plugin-unparsable = node { $node }: config { $config } does not parse: { $reason }
grade-plugin-mig-allocatable = node { $node }: allocatable { $resource } is { $found }, GFD labels give { $expected }
grade-plugin-mig-in-effect = node { $node }: config { $config } in effect (MIG mixed, { $advertised })
grade-plugin-no-gpu-count = node { $node }: no nvidia.com/gpu.count label yet (GFD has not labelled the node)
grade-plugin-replicas = node { $node }: nvidia.com/gpu.replicas is { $found }, config { $config } gives { $expected }
grade-plugin-strategy = node { $node }: nvidia.com/gpu.sharing-strategy is { $found }, config { $config } gives { $expected }
grade-plugin-allocatable = node { $node }: allocatable { $resource } is { $found }, config { $config } gives { $gpus } GPU(s) × { $replicas } = { $expected }
grade-plugin-in-effect = node { $node }: config { $config } in effect ({ $strategy }, { $resource } { $advertised })

## grading: alert rules (src/grade/alert.rs)
alert-does-not-parse = does not parse: { $reason }
alert-unsupported = uses { $construct }, which the engine's evaluator does not support
alert-construct-offset = offset or @
alert-construct-or-in-selector = `or` inside a selector
alert-construct-aggregation-parameter = aggregation { $op } with a parameter
alert-construct-aggregation-scalar = { $op } over a scalar
alert-construct-aggregation = aggregation { $op }
alert-construct-vector-of-vector = vector() of a vector
alert-construct-function = function { $name }()
alert-construct-range-selector = range selectors
alert-construct-subquery = subqueries
alert-construct-string-literal = string literals
alert-construct-extension = extensions
alert-construct-operator = operator { $op } between these operands
alert-construct-scalar-comparison = comparison { $op } between scalars without bool
alert-yields-scalar = yields a scalar, not a vector
alert-breakage-image = the new image cannot be pulled
alert-breakage-unschedulable = the new pod cannot be scheduled
alert-breakage-desired-dropped = the template no longer targets a node (DESIRED dropped)
alert-expr-error = { $object }: alert { $alert }: expr { $expr } { $reason }
alert-fires-on-every-breakage = { $object }: alert { $alert } fires on every kind of breakage of { $daemonset }, not on the restored one, for { $duration }
alert-for-too-short = { $object }: alert { $alert }: `for: { $duration }` is shorter than { $least }
alert-never-fires = { $object }: alert { $alert } does not fire on a broken rollout of { $daemonset }
alert-misses = { $object }: alert { $alert } does not fire when { $breakages }
alert-nor-when = { ", nor when " }
alert-fires-when-restored = { $object }: alert { $alert } also fires when { $daemonset } is restored
alert-fires-on-incidentals = { $object }: alert { $alert } does not always fire when { $breakages }: it fires in some of the checked states and not in others that differ only in what says nothing about the rollout (generation, age, pod name, target labels)
alert-rule-not-the-learners = { $object } existed before the lab started: not graded
alert-no-rule = no alerting rule found in { $target }

## the loader's problems (src/lab/loader/**)
loader-yaml-error = { $reason }
loader-yaml-error-at = { $path }: { $reason }
loader-yaml-field-at = { $path }: { $problem }
loader-yaml-unknown-field = unknown field `{ $field }`, expected one of { $expected }
loader-yaml-missing-field = missing field `{ $field }`
loader-cannot-read = cannot read: { $reason }
loader-cannot-read-dir = cannot read { $path }: { $reason }
loader-label-here = here
loader-label-listed-again = listed again
loader-label-no-such-lab = no such lab
loader-label-this-id = this id
loader-label-this-lab = this lab
loader-label-duplicate = duplicate
loader-label-this-shortcut = this shortcut
loader-label-in-this-stage = in this stage
loader-label-this-stage = this stage
loader-label-this-path = this path
loader-label-this-file = this file
loader-label-itself = itself
loader-label-unknown-task = unknown task
loader-label-closes-cycle = closes the cycle
loader-label-this-task = this task
loader-label-in-this-task = in this task
loader-course-twice = the course lists lab { $lab } twice (first on line { $line })
loader-course-no-bundle = the course lists lab { $lab }, which has no bundle (labs: { $labs })
loader-course-no-bundle-help = add the bundle directory { $lab }/ with a lab.yaml, or remove the entry
loader-lab-id-invalid = lab id { $id } must be lowercase letters, digits and '-'
loader-lab-id-not-dir = lab id { $id } differs from its bundle directory { $dir }
loader-lab-id-not-dir-help = rename the directory or the id: `labs list` and `start` find a lab by its directory
loader-no-stages = the lab has no stages
loader-no-tasks = the lab has no tasks
loader-duplicate = duplicate { $what } (first defined on line { $line })
loader-duplicate-variant = variant id { $id }
loader-duplicate-stage = stage id { $id }
loader-duplicate-task = task id { $id }
loader-duplicate-shortcut = shortcut or solution (task { $task }) id { $id }
loader-shortcut-no-commands = shortcut or solution { $shortcut } of task { $task } has no commands
loader-stage-unknown-variant = stage { $stage } has variant { $variant }, which the lab does not declare (variants: { $known })
loader-stage-unknown-variant-help = declare it under the top-level `variants`
loader-stage-missing-variant = stage { $stage } has variants but none for lab variant { $variant }
loader-wait-needs-symptom = stage { $stage }: the stalledAsIntended wait on { $target } needs a `symptom`
loader-wait-needs-symptom-help = symptom: imagePullBackOff, unschedulable or desiredDropped
loader-wait-symptom-unused = stage { $stage }: only a stalledAsIntended wait takes a `symptom` (wait on { $target })
loader-wait-needs-field = stage { $stage }: the { $wait } wait on { $target } needs `{ $field }`
loader-wait-field-unused = stage { $stage }: `{ $field }` does not belong to a { $wait } wait (wait on { $target })
loader-wait-stalled-daemonset = stage { $stage }: stalledAsIntended confirms a DaemonSet's broken rollout, and { $target } is not a DaemonSet
loader-wait-stalled-daemonset-help = for another kind, wait for a condition (`for: condition`), an Event (`for: event`) or a CEL expression (`for: cel`)
loader-label-this-fact = this fact
loader-duplicate-fact = fact id { $id }
loader-fact-id-invalid = fact id { $id } must be lowercase letters, digits and '-', and not `variant`
loader-fact-source = fact { $id } needs exactly one of `path` and `expression`
loader-fact-path-needs-name = fact { $id } reads a `path` of one object: give `from` a `name`
loader-quiz-unknown-fact = quiz { $task } compares with fact { $fact }, which no stage captures (facts: { $known })
loader-quiz-unknown-fact-help = facts are `variant`, `affectedNode` and the ids under a stage's `facts:`
loader-manifest-outside = manifest { $path } must be a relative path inside the bundle
loader-file-outside = file { $path } must be a relative path inside the bundle
loader-manifest-missing = manifest { $path } does not exist ({ $shown })
loader-file-missing = file { $path } does not exist ({ $shown })
loader-manifest-unreadable = cannot read manifest { $path }: { $reason }
loader-file-unreadable = cannot read file { $path }: { $reason }
loader-manifest-empty = the manifest holds no objects
loader-document-unnamed = document { $document } needs apiVersion, kind and metadata.name
loader-file-not-a-map = the file must hold one YAML map (a partial object)
loader-needs-itself = task { $task } needs itself
loader-needs-unknown = task { $task } needs unknown task { $need } (tasks: { $known })
loader-needs-cycle = `needs` form a cycle: { $cycle }
loader-quiz-without-quiz = quiz task { $task } has no `quiz` expectation
loader-quiz-in-task = task { $task } has a `quiz` expectation but is not `kind: quiz`
loader-expectation-problem = task { $task }, expectation { $number } ({ $kind }): { $problem }
loader-running-needs-pods = `want: running` judges existing pods: give `pods`, not `podFile`
loader-schedulable-source = give exactly one of `pods` and `podFile`
loader-broken-stage-unknown = brokenStage { $stage } is not a stage of the lab
loader-quiz-nothing-accepted = give `fact`, `accept` or `acceptByVariant`
loader-quiz-unknown-variant = acceptByVariant names unknown variant { $variant }
loader-quiz-not-a-choice = accepted answer { $value } is not one of `choices`
loader-quiz-no-attempts = `attempts` must be at least 1
loader-quiz-placeholder = the { $lang } description shows `lab-runner answer` with { $word }, not with the quiz's `placeholder`; `check` tells a learner who has not answered to type the placeholder
loader-cel-no-target = give `target` (bound as `object`) or `targets` (each bound by its name)
loader-cel-target-name = target name { $name } must be a CEL identifier (letters, digits and `_`) other than `object`, `answers`, `fact`, a reserved word or a type name
loader-cel-error = the CEL expression does not compile: { $error }
loader-cel-error-help = the expression may use: { $variables }
loader-wait-problem = stage { $stage }, wait on { $target }: { $problem }
loader-fact-problem = fact { $id }: { $problem }

## lint's authoring rules (src/engine/lint.rs, src/commands/lint.rs)
warning-line = warning: { $message }
lint-text-missing = { $what } has no `{ $lang }` text
lint-what-lab-title = the lab title
lint-what-lab-briefing = the lab briefing
lint-what-field = { $field }
lint-label-unknown-field = unknown field
lint-unknown-kind = { $api_version } has no kind { $kind }
lint-unknown-field = { $kind } has no field { $path }
lint-unknown-field-null = { $kind } has no field { $path }: `null` there means absent, so it would hold on every object
lint-did-you-mean = did you mean { $suggestion }?
lint-known-fields = the fields of { $parent } are: { $known }
lint-below-scalar = { $kind }: { $path } is a { $type_ } and has no fields
lint-is-a-list = { $kind }: { $path } is a list: index it, or write its elements as a list
lint-not-a-list = { $kind }: { $path } is not a list
lint-cel-list = { $variable } is the list of the { $kind } objects its target selects and has no fields: use `{ $variable }.all(x, …)`, `.exists`, `.map` or an index
lint-what-variant-description = variant { $variant }'s description
lint-what-task-title = task { $task }'s title
lint-what-task-description = task { $task }'s description
lint-what-task-hint = task { $task }'s hint { $tier }
lint-points = task { $task } has { $points } points; points must be above zero
lint-no-hints = task { $task } has no hints
lint-no-hints-help = give hints in tiers: a nudge, a pointer, then the command
lint-no-solution = task { $task } has no reference solution
lint-no-solution-help = `selftest` runs each task's `solution` commands to prove the task can pass
lint-label-passes-empty = passes on an empty cluster
lint-vacuous = task { $task } is vacuous: it passes on an empty cluster ({ $evidence })
lint-vacuous-help = add an expectation that needs the learner's work to exist, e.g. a `match` or `count >= 1`
lint-no-shortcuts = task { $task } declares no shortcuts
lint-no-shortcuts-help = list the attempts a learner might make to reach PASS without doing the task (`shortcuts:`); `selftest` proves none of them passes

## the engine's errors (src/engine/**)
error-no-current-context = no context given and no current-context set
error-no-answer = no answer within { $seconds }s
error-api = { $action }: { $reason }
error-preflight = the cluster does not fit lab { $lab }: { $reason }
error-timed-out = timed out after { $seconds }s waiting for { $what }: { $seen }
error-not-reproduced = the breakage did not reproduce: { $reason }
error-inventory = the lab inventory is unreadable: { $reason }
error-unknown-stage = lab { $lab } has no stage { $stage } (stages, in order: { $known })
error-unknown-variant = lab { $lab } has no variant { $variant } (variants: { $known })
action-access-review = asking the server what this user may do (SelfSubjectAccessReview)
action-apply = applying { $object }
action-create-namespace = creating namespace { $namespace }
action-delete = deleting { $object }
action-discover = discovering the served kinds
action-list = listing { $plural }
action-list-in = listing { $plural } in { $namespace }
action-list-nodes = listing nodes
action-list-nodes-labels = listing nodes to record their labels
action-list-nodes-preflight = listing nodes for the preflight
action-list-nodes-to-record = listing nodes to record them
action-post = POST { $path }
action-read = reading { $object }
action-read-inventory = reading the inventory { $object }
action-resolve = resolving { $kind } through discovery
action-restore = restoring { $object }
action-restore-configmap = restoring ConfigMap { $object }
action-restore-node-labels = restoring the labels of node { $node }
action-watch = watching the { $feed }
action-write-inventory = writing the inventory { $object }
watch-stopped-before-listed = stopped before it was listed
inventory-field-unreadable = { $key }: { $reason }
apply-unnamed = a { $kind } manifest of lab { $lab } has no metadata.name
answer-not-one-line = the answer to { $task } must be one non-empty line; nothing was recorded
answer-not-a-node = { $value } is not a node of this cluster (see `kubectl get nodes`); nothing was recorded
answer-not-a-choice = { $value } is not one of the answers to { $task } ({ $choices }); nothing was recorded
answer-busy = { $task }: the lab's records kept changing while the answer was recorded; nothing was recorded, try again
answer-locked = { $task } is locked: all { $limit } of its attempts are used; nothing was recorded
class-kubeconfig-unreadable = cannot read the kubeconfig { $path }: { $reason }
class-kubeconfig-no-learner = { $path } has no learner context (only viewer contexts, or none)
class-kubeconfig-dangling-cluster = { $path }: context { $context } names a cluster the file does not define
class-kubeconfig-dangling-user = { $path }: context { $context } names a user the file does not define
class-kubeconfig-name-count = --name was given { $names } times for { $inputs } kubeconfigs: give it once per kubeconfig, in order
preflight-nodes = it needs at least { $min } nodes matching { $selector } ({ $description }), found { $found } of { $total } nodes; label the nodes or start the embedded simulator with `lab-runner sim up`
preflight-nodes-advertising = it needs at least { $min } nodes matching { $selector } advertising { $resources } ({ $description }), found { $found } of { $total } nodes; label the nodes or start the embedded simulator with `lab-runner sim up`
preflight-denied = this user may not { $denied }; use a kubeconfig context with cluster-admin rights for `start` (`kubectl auth can-i patch daemonsets -n NAMESPACE` checks one)
preflight-denied-cluster = patch { $resource }
preflight-denied-in = patch { $resource } in namespace { $namespace }
reset-wait-deleted = { $object } to be deleted
reset-still-there = still there, finalizers [{ $finalizers }]
start-created-meanwhile = start { $lab } stopped at stage { $stage }: { $object } was created meanwhile by someone else; delete it and run `lab-runner start { $lab }` again to resume
start-daemonset-unparsable = DaemonSet { $name } does not parse: { $reason }
start-wait-no-symptom = the stalledAsIntended wait on { $target } names no symptom
start-waiting-for = { $condition } { $kind } { $target }
start-seen-not-yet = not { $condition } yet
start-seen-desired-zero = no node wants a pod yet (DESIRED 0)
start-seen-rollout = { $message }
start-seen-replicas = { $available } of { $replicas } updated and available
start-seen-pod = { $pod } on { $node }: { $state }
start-seen-pods = { $pods }
start-seen-no-pods = no pods
start-seen-desired = DESIRED { $desired }; nodes without a wanted pod: { $nodes }
start-seen-stale = status observed at generation { $observed }, the object is at generation { $generation }
start-seen-no-conditions = no conditions yet
start-seen-conditions = conditions: { $conditions }
start-seen-no-events = no Event { $reason } about it or what it owns yet
start-seen-events = no Event { $reason } about it or what it owns yet; its Events: { $reasons }
start-seen-cel = `{ $expression }` is { $result }
start-seen-cel-error = `{ $expression }` could not be evaluated: { $error }
start-fact-unreadable = fact { $fact } could not be read: { $reason }
start-fact-not-one = { $target } selects { $count } objects; a fact's path is read from exactly one
start-fact-absent = { $target } has no { $path }
start-fact-cel = { $reason }
start-fact-not-scalar = the value is not a string, a number or a boolean: { $value }
start-too-many-pulling = { $count } pods are in ImagePullBackOff, expected the rollout to stop at exactly one: { $seen }
start-too-many-unschedulable = { $count } pods are unschedulable, expected exactly one: { $seen }

## selftest's transcript (src/engine/selftest.rs) and the demo (src/commands/demo.rs)
selftest-header = selftest { $name }
selftest-name-variant = { $lab }, variant { $variant }
selftest-ok = ok: { $seen }
selftest-failed = FAILED: { $message }
selftest-error = ERROR: { $error }
selftest-verdict-passed = selftest { $name }: passed
selftest-verdict-failed-task = selftest { $name }: FAILED at step "{ $step }" (task { $task })
selftest-verdict-failed-step = selftest { $name }: FAILED at step "{ $step }"
selftest-verdict-failed = selftest { $name }: FAILED
selftest-verdict-error = selftest { $name }: ERROR at step "{ $step }"
selftest-step-reset = reset
selftest-step-start = start
selftest-step-check-before = check before any solution
selftest-step-shortcuts = shortcuts of { $task }
selftest-step-shortcut = shortcut { $task }/{ $shortcut }
selftest-step-back = back before the solution of { $task }
selftest-step-alternative = solution { $task }/{ $solution }
selftest-step-other-order = another order: { $task } ({ $solution })
selftest-step-reset-other-order = reset for another order
selftest-step-facts = facts after reset
selftest-step-reset-end = reset at the end
selftest-facts-fresh = { $count ->
    [one] the quiz graded against a fact captured at start is right with its solution
   *[other] { $count } quizzes graded against facts captured at start are right with their solutions
}
selftest-fact-stale = quiz { $task } is { $status } with its solution after reset: the fact was not captured again{ $evidence }
selftest-after-reset-not-as-started = task { $task } is { $status } after reset, { $start } at the start{ $evidence }
selftest-alternative-failed = solution { $solution } of task { $task } could not be run: { $reason }
selftest-alternative-not-passing = task { $task } is { $status } after its solution { $solution }, which must pass as well{ $evidence }
selftest-step-solution = solution { $task }
selftest-step-reset-after = reset after the solutions
selftest-step-check-after = check after reset
selftest-step-owned = lab-owned objects after reset
selftest-reset-done = { $count ->
    [one] 1 step
   *[other] { $count } steps
}
selftest-started = { $count ->
    [one] 1 object applied
   *[other] { $count } objects applied
}
selftest-started-variant = { $count ->
    [one] variant { $variant }, 1 object applied
   *[other] variant { $variant }, { $count } objects applied
}
selftest-shortcuts-skipped = skipped: this cluster keeps no checkpoints, and a shortcut (a node deleted or cordoned) could not be undone; { $count } shortcut(s) run on a simulator
selftest-restored = restored
selftest-no-solution = task { $task } has no reference solution
selftest-solution-failed = the solution of task { $task } failed: { $reason }
selftest-command-failed = `{ $command }` { $exit }{ $stderr }
selftest-shortcut-failed = shortcut { $shortcut } of task { $task } could not be run: { $reason }
selftest-shortcut-passes = task { $task } passes after shortcut { $shortcut } ({ $description }){ $evidence }
selftest-task-status = { $task } { $status }{ $evidence }
selftest-task-missing = task { $task } not in the report
selftest-evidence = { " " }({ $line })
selftest-not-passing-after-solution = task { $task } is { $status } after its solution, expected PASS{ $evidence }
selftest-regressed = task { $task } passed after its solution but is { $status } after the solution of task { $after }{ $evidence }
selftest-all-pass = { $task } PASS; every task passes (score { $score }/{ $total })
selftest-pass-rest = { $task } PASS; not solved yet: { $counts }
selftest-passes-before = task { $task } passes before its solution{ $evidence }
selftest-passes-before-after = task { $task } passes before its solution (after the solution of task { $after }){ $evidence }
selftest-status-before = task { $task } is { $status } before its solution, expected FAIL or BLOCKED{ $evidence }
selftest-status-before-after = task { $task } is { $status } before its solution (after the solution of task { $after }), expected FAIL or BLOCKED{ $evidence }
selftest-owned-same = as the first reset left them ({ $count } checked)
selftest-owned-differ = reset did not bring back the start state: { $problems }
selftest-fact-namespace = namespace { $namespace } exists
selftest-fact-namespace-absent = namespace { $namespace } absent
selftest-fact-node-resource = node { $node } { $key }={ $value }
selftest-fact-node-label = node { $node } label { $key }={ $value }
selftest-fact-configmap = ConfigMap { $object } data { $data }
selftest-fact-configmap-absent = ConfigMap { $object } data (absent)
selftest-left-after-reset = left after reset: { $fact }
selftest-missing-after-reset = missing after reset: { $fact }
selftest-stage-object-missing = { $object } of stage { $stage } is missing
selftest-stage-object-differs = { $object } differs from stage { $stage } at { $path }
selftest-top-level = the top level
selftest-fixture-unreadable = --fixture { $path }: { $reason }
command-succeeded = succeeded
command-exited = exited { $code }
command-killed = was killed by a signal
command-timed-out = did not finish within { $seconds }s
command-not-started = could not be started: { $reason }
demo-interrupted = { $command } interrupted: its simulator was stopped
demo-post-invalid = POST { $path }: { $reason }
demo-simulator-killed = the temporary simulator was killed: { $reason }
demo-simulator-not-stopped-pid = could not stop the temporary simulator (pid { $pid }): { $reason }
demo-simulator-not-stopped = could not stop the temporary simulator: { $reason }

## class (src/class/**)
class-report-heading = class report: { $lab } — { $learners } learner(s), { $passed } passed
class-report-learner = LEARNER
class-report-result = RESULT
class-report-score = SCORE
class-report-no-result = no result from index { $index } of job { $job } yet (still running, or failed: see its pod's log)
class-report-bad-result = the result of index { $index } is not a report: { $reason }
class-board-watch-ended = { $server }: every watch on this cluster ended; trying again
class-sim-already-up = up (already running)
class-sim-started = started
class-sim-restarted = restarted
class-sim-untouched = -
class-failed = FAILED (below)
class-lab-already-started = { $lab } already started (kept as the learner left it)
class-lab-started = { $lab } started
class-lab-found-started = { $lab } found started (recorded, not applied again)
class-lab-reset = { $lab } reset to its start
class-lab-learner-down = { $lab } not started: the learner is down
class-lab-failed = { $lab } FAILED (below)
class-summary = { $failed ->
    [0] { $learners } learner(s), all ready
   *[other] { $learners } learner(s), { $failed } failed: the others are ready, and `lab-runner class up` tries the failed ones again
}
class-kubeconfigs = class kubeconfig (one context per learner): { $class }
    hand out: { $learner }
class-down-kept = class stopped: { $running } of { $learners } learner(s) were running, in { $processes } process(es); state kept
class-down-purged = class stopped: { $running } of { $learners } learner(s) were running, in { $processes } process(es); state purged
class-status-learner = LEARNER
class-status-state = STATE
class-status-endpoint = ENDPOINT
class-status-lab = LAB
class-status-score = SCORE
class-status-no-lab = no lab
class-status-error = error: { $reason }
class-status-lab-pending = { $lab } (not started yet)
class-status-lab-failed = { $lab } (start failed)
class-board-learner-stopped = { $learner } is stopped: `lab-runner class up` starts it again
class-board-learner-gone = { $learner }'s simulator (pid { $pid }) is gone: `lab-runner class restart { $learner }` brings it back with its work

## Issue #32: the help pages (src/cli/help.rs). A command's about is help-<path> (`help` for
## lab-runner itself), its long about help-<path>-long, a flag's help help-<path>--<flag>, looked
## up from the command towards lab-runner (help-sim--state-dir serves every sim command).
help = Runs and grades the hands-on labs of a Kubernetes GPU-sharing course, with an embedded simulated GPU cluster
help--kubeconfig = Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
help--context = The kubeconfig context to use (default: its current context)
help--verbose = More output; repeat for more (-vv)
help--lang = Language of everything printed (default: from LANG; ja when it starts with "ja")
help--labs = Read lab bundles from this directory instead of the ones built into the binary
help--lab = Lab id (see `lab-runner labs list`)
help-start = Apply a lab's stages and wait until the cluster is in the lab's starting state
help-start--variant = Which variant of the lab to start (default: chosen from --seed)
help-start--seed = Seed that picks the default variant reproducibly
help-start--reveal = Name the variant started (instructors; it answers a quiz, so learners do not see it)
help-start--yes = Replace another variant whose breakage is applied without asking
help-check = Grade the learner's work: PASS/FAIL/BLOCKED/ERROR per task, with evidence and hints
help-check--format = Report format: human (coloured text for a terminal), json (versioned JSON, docs/report-format.md) or junit (JUnit XML for CI systems)
help-check--hint = Show hints up to this tier (1 = nudge, 2 = pointer, 3 = command)
help-check--reveal = Instructors: also show the reference solution of failing tasks and the variant started
help-check--details = Show every task's description (a failing task's is always shown)
help-check--confirm = Observe twice, this far apart, and pass only what held both times (e.g. 30s)
help-check--watch = Re-evaluate on every change and show a live checklist; ends when every task passes (or on Ctrl-C, or at --timeout)
help-check--timeout = With --watch: stop after this long (e.g. 10m) with exit 4 unless every task passed
help-check--contexts = Grade these kubeconfig contexts (a class); `all` grades every context
help-answer = Record the answer to a quiz task in the cluster
help-answer--task = Quiz task id
help-answer--value = The answer
help-reset = Reset the cluster to the lab's starting state (instructors)
help-reset--to-stage = Reset to the state after this stage instead of the state `start` leaves (every stage)
help-reset--variant = Start the lab again with this variant instead of the one it runs (instructors)
help-reset--seed = Pick the variant to start again with from this seed, as `start --seed` does
help-reset--remove = Take the lab off the cluster: what it and its learners created deleted, every pre-image restored, its inventory deleted (the cluster as before the first `start`)
help-reset--dry-run = Print the plan and change nothing
help-reset--yes = Do not ask before deleting
help-status = Show what a learner of the lab looks at: rollouts, GPU node configs, team quotas
help-status--lab = Lab id (omit with --daemonset)
help-status--daemonset = Show any DaemonSet as NAMESPACE/NAME
help-status--reveal = Instructors: also show the variant and the values recorded at start (never shown otherwise)
help-selftest = Prove every check fails before and passes after the reference solution
help-selftest-long = Prove every check fails before and passes after the reference solution.
    
    Runs on a fresh embedded simulator unless --kubeconfig or --context names a cluster ($KUBECONFIG alone does not: the selftest resets the lab, deleting its namespaces).
help-selftest--variant = Variant to test, or `all` (default: every variant)
help-selftest--speed = Make the fresh simulator's delays pass this many times faster
help-selftest--fixture = Apply the manifests in this directory (e.g. manifests/clusters/brownfield, a cluster that already runs things) before the selftest, as a platform team would have
help-demo = Run a lab end to end on a fresh embedded simulator: start, status, solution, check
help-demo--variant = Variant to run
help-lint = Validate lab bundles: schema, references, hints, texts, no vacuous tasks
help-lint--paths = Lab bundle directories or lab.yaml files (default: every built-in lab)
help-labs = List or show the available labs
help-labs-list = List labs: id, title, tasks and points
help-labs-show = Show one lab: briefing, stages, tasks
help-labs-show--variant = Instructors: also what this variant breaks, the quiz answers it accepts and the shortcuts the selftest proves do not pass (never shown otherwise)
help-labs-show--reveal = Instructors: also the quiz answers (of every variant, for a lab with variants) and the shortcuts the selftest proves do not pass (never shown otherwise)
help-sim = The embedded simulated GPU cluster
help-sim--state-dir = State directory: store, certificates, kubeconfig, pid file
help-sim--topology = Cluster topology file (default: the built-in lab topology)
help-sim--nodes = Generate a topology with this many worker nodes instead
help-sim--port = Port on 127.0.0.1 (default: any free port)
help-sim--listen = Address to listen on, `IP:PORT` or `IP` (any free port), e.g. `0.0.0.0:6443` in a container (default: 127.0.0.1); TLS and tokens stay on
help-sim--tls-san = Another name the server certificate carries (DNS name or IP address), besides 127.0.0.1 and localhost; repeatable
help-sim--speed = Make simulated delays pass this many times faster
help-sim--api-only = Serve the API only: no scheduler, kubelets or controllers reconcile what is written (like a kube-apiserver alone)
help-sim-up = Start the simulator in the background and write its kubeconfig
help-sim-down = Stop the background simulator
help-sim-status = Show the background simulator: pid, endpoint, uptime, object counts
help-sim-serve = Run the simulator in the foreground
help-sim-kubeconfig = Print the simulator's admin kubeconfig (e.g. `docker exec CONTAINER lab-runner sim kubeconfig --server https://127.0.0.1:PORT` for a published container port)
help-sim-kubeconfig--server = The server URL to write (default: the running simulator's endpoint)
help-class = A class: many learner simulators on this host, one context each in one kubeconfig; or learners' own kubeconfigs merged into one
help-class--state-dir = Class directory: class.json, kubeconfig, learner-01/ … (default: $XDG_STATE_HOME/lab-runner/class)
help-class--tls-san = Another name the learners' certificates carry; repeatable
help-class-up = Create a class of N learner simulators (one process each), or bring the recorded class back: start what is down on the same ports, and the lab in every learner that has not started it (never again in one who has). Writes DIR/kubeconfig (one context per learner) and DIR/learner-NN/kubeconfig
help-class-up--learners = How many learners (1 to 100): needed to create a class; more than it has adds learners
help-class-up--lab = Lab to start in every learner's cluster
help-class-up--variant = The variant every learner gets
help-class-up--seed = Seed the learners' variants come from: learner 1 gets what `start --seed S` picks, each next learner the next variant
help-class-up--listen = Address the learners listen on, `IP` (any free port each) or `IP:PORT` (learner N on PORT+N-1) (default: 127.0.0.1)
help-class-up--processes = One simulator process per learner (per-learner, the default for a new class) or one process for every learner (shared)
help-class-start = Start LAB in every learner that has not started it, and make it the class's lab (a class made without --lab, or the course's next lab)
help-class-start--lab = The lab
help-class-start--variant = The variant every learner gets
help-class-start--seed = Seed the learners' variants come from (default: the class's)
help-class-restart = Stop and start these learners' simulators again, on their ports, keeping their work
help-class-restart--learners = The learners (learner-03 …), or `all`
help-class-reset = Put the class's lab in these learners' clusters back to what its start left
help-class-reset--learners = The learners (learner-03 …), or `all`
help-class-status = Show every learner: up or down, endpoint, lab, score
help-class-down = Stop every learner at once (state kept unless --purge)
help-class-down--purge = Also delete the learners' state, the kubeconfigs and the class record
help-class-board = Serve the instructor's live page: learners × tasks, updated as learners work
help-class-board--state-dir = Class directory: grades every learner of the class in its lab (default: $XDG_STATE_HOME/lab-runner/class, unless --contexts is given)
help-class-board--contexts = Grade these contexts of --kubeconfig instead of a class directory; `all`: every context
help-class-board--lab = The lab to grade (default: the class's lab)
help-class-board--listen = Address the page is served on
help-class-board--retry = How soon a learner whose cluster cannot be reached is tried again (learners that are reached are graded again on every change, by their watches)
help-class-board--stalled-after = Mark a learner who has not finished and whose verdicts have not changed for this long
help-class-board--token = The token every request must carry (`generate`: a random one, printed in the URL at start); required on any address other than loopback
help-class-board--reveal = Show quiz answers, variants and solutions on the board (never project it then)
help-class-board--memory = Where each learner's "unchanged for" clock is kept across board restarts (default: the class directory's board.json; none with --contexts)
help-class-report = One class report (the shape of `check --contexts all --format json`): the learners of a class graded now, report files, or the grade Job's results in the cluster
help-class-report--state-dir = Class directory: grades every learner of the class now (the default when neither report files nor --job are given)
help-class-report--files = Report files: a learner's `check --format json` each (named after the file, or its directory for `report.json`), or class reports
help-class-report--job = A grading run of deploy/kubernetes (NAMESPACE/NAME, a Job made from the grade CronJob): its results ConfigMaps (also once the Job is gone), read with --kubeconfig/--context
help-class-report--lab = The lab (default: the class's, or the reports')
help-class-report--format = Output format: human, json or junit
help-class-kubeconfig = Merge learners' kubeconfigs (files or simulators' state directories) into one with a context per learner (named after the file or directory), leaving viewer contexts out
help-class-kubeconfig--inputs = Learners' kubeconfig files or `sim up` state directories
help-class-kubeconfig--name = The learners' names, once per input in order (default: from the file or directory names)
help-class-kubeconfig--output = Write the merged kubeconfig here (mode 0600) instead of stdout
help-class-serve-shared = Serve every learner of the class record in DIR, on its recorded port (what `class up --processes shared` runs)
help-class-serve-shared--state-dir = Class directory
help-completions = Print a shell completion script
help-completions--shell = The shell

## clap's own words on the help pages (src/cli/help.rs)
help-heading-usage = Usage:
help-heading-commands = Commands
help-heading-arguments = Arguments
help-heading-options = Options
help-heading-exit-codes = Exit codes:
help-with-notes = { $help }{ $notes }
help-note-values = { " " }[possible values: { $values }]
help-note-default = { " " }[default: { $value }]
help-note-env = { " " }[env: { $name }]
help-note-aliases = { " " }[aliases: { $aliases }]
help-builtin-help = Print help
help-builtin-help-summary = Print help (see more with '--help')
help-builtin-help-long = Print help (see a summary with '-h')
help-builtin-version = Print version
help-builtin-help-command = Print this message or the help of the given subcommand(s)
help-builtin-help-command-arg = Print help for the subcommand(s)

## exit codes (src/exit.rs)
exit-code-ok = all passed / done
exit-code-checks-failed = checks failed (or, for status, the lab is not started or its start did not finish)
exit-code-bad-input = bad input (CLI usage, lab bundle, an invalid answer, a refused start)
exit-code-cluster-error = cluster unreachable, API error, or the cluster does not fit the lab
exit-code-timed-out = timed out waiting

## clap's usage errors (src/cli/usage_error.rs), worded as clap words them
usage-try-help = For more information, try '--help'.
usage-tip = tip: { $text }
usage-unknown-argument = unexpected argument '{ $arg }' found
usage-unknown-subcommand = unrecognized subcommand '{ $name }'
usage-value-required = a value is required for '{ $arg }' but none was supplied
usage-invalid-value = invalid value '{ $value }' for '{ $arg }'
usage-invalid-value-because = invalid value '{ $value }' for '{ $arg }': { $reason }
usage-possible-values = [possible values: { $values }]
usage-missing-arguments = the following required arguments were not provided:
usage-missing-subcommand = '{ $name }' requires a subcommand but one was not provided
usage-possible-subcommands = [subcommands: { $values }]
usage-too-many-values = unexpected value '{ $value }' for '{ $arg }' found; no more were expected
usage-too-few-values = { $count } values required by '{ $arg }'; only { $given } { $given ->
    [1] was provided
   *[other] were provided
}
usage-wrong-number-of-values = { $count } values required for '{ $arg }' but { $given } { $given ->
    [1] was provided
   *[other] were provided
}
usage-no-equals = equal sign is needed when assigning values to '{ $arg }'
usage-invalid-utf8 = invalid UTF-8 was detected in one or more arguments
usage-subject-argument = the argument '{ $name }'
usage-subject-subcommand = the subcommand '{ $name }'
usage-argument-repeated = { $subject } cannot be used multiple times
usage-conflict = { $subject } cannot be used with '{ $other }'
usage-conflict-list = { $subject } cannot be used with:
usage-conflict-unnamed = { $subject } cannot be used with one or more of the other specified arguments
usage-other = { $text }
usage-reason-other = { $text }
usage-similar-subcommand = { $count ->
    [one] a similar subcommand exists: { $names }
   *[other] some similar subcommands exist: { $names }
}
usage-similar-argument = { $count ->
    [one] a similar argument exists: { $names }
   *[other] some similar arguments exist: { $names }
}
usage-similar-value = { $count ->
    [one] a similar value exists: { $names }
   *[other] some similar values exist: { $names }
}
usage-tip-pass-as-value = to pass '{ $value }' as a value, use '{ $usage }'
usage-tip-remove-dashes = subcommand '{ $subcommand }' exists; to use it, remove the '--' before it
usage-tip-exists = '{ $usage }' exists
value-not-a-whole-number = expected a whole number from 0 to { $max }
value-not-a-number = expected a number
value-not-a-duration = use a number with s, m or h, like 30s or 2m
value-not-a-listen-address = expected IP:PORT (e.g. 0.0.0.0:6443) or IP
value-not-a-socket-address = expected IP:PORT (e.g. 127.0.0.1:8420)

## durations (src/i18n/mod.rs)
duration-s = { $s }s
duration-m = { $m }m
duration-m-s = { $m }m{ $s }s
duration-h = { $h }h
duration-h-m = { $h }h{ $m }m
duration-d = { $d }d
duration-d-h = { $d }d{ $h }h

## words from outside: operating-system errors by kind, library texts (src/i18n/outside.rs).
## In English the original text is shown as it is: it already names the kind.
os-error = { $text }
quoted-text = { $text }
os-not-found = not found
os-permission-denied = permission denied
os-connection-refused = connection refused
os-connection-reset = connection reset
os-connection-aborted = connection aborted
os-not-connected = not connected
os-host-unreachable = host unreachable
os-network-unreachable = network unreachable
os-address-in-use = address in use
os-address-not-available = address not available
os-broken-pipe = broken pipe
os-already-exists = already exists
os-timed-out = timed out
os-unexpected-eof = unexpected end of file
os-invalid-data = invalid data
os-is-a-directory = is a directory
os-not-a-directory = not a directory
os-directory-not-empty = directory not empty
os-read-only-filesystem = read-only file system
os-storage-full = no space left on the device
os-out-of-memory = out of memory
kube-status = { $message } ({ $code })
value-none = none

## the simulator's lifecycle (src/sim/lifecycle/**, src/commands/sim.rs)
sim-status-pid = pid
sim-status-endpoint = endpoint
sim-status-uptime = uptime
sim-status-kubeconfig = kubeconfig
sim-status-revision = revision
sim-status-objects = objects
sim-status-no-objects = (none)
sim-error-no-state-dir = cannot choose a state directory: set LAB_RUNNER_SIM_DIR or pass --state-dir
sim-error-state-dir-unwritable = state directory { $dir } is not writable: { $reason }
sim-error-port-in-use = port { $port } on { $ip } is already in use: choose another with --port or --listen, or omit the port for a free one
sim-error-bind = cannot listen on { $addr }: { $reason }
sim-error-already-running = a simulator is already running from { $dir } (pid { $pid }, { $endpoint }); stop it with `lab-runner sim down`
sim-error-already-running-unknown = a simulator is already running from { $dir } (pid { $pid }); stop it with `lab-runner sim down`
sim-error-no-state = no simulator state in { $dir }: start one with `lab-runner sim up` or `sim serve` first
sim-error-not-running = no simulator is running from { $dir } (no pid file); `lab-runner sim up` starts one
sim-error-stale-pid-file = no simulator is running from { $dir }: process { $pid } in its pid file is gone (stale pid file removed)
sim-error-topology = topology { $at }: { $reason }
sim-error-topology-config = topology: { $reason }
sim-error-controllers = controllers: { $reason }
sim-error-store = store { $path }: { $reason }
sim-error-certificate = certificate ({ $what }): { $reason }
sim-error-tls = TLS configuration: { $reason }
sim-error-random = cannot generate a token: the system random number generator failed
sim-error-spawn = cannot start `{ $program } sim serve`: { $reason }
sim-error-server-exited = the simulator exited during start: { $reason }
sim-error-server-exited-silently = the simulator exited during start ({ $status }); see { $log }
sim-error-start-timed-out = the simulator did not answer within { $seconds }s (see { $log })
sim-error-stop-timed-out = simulator process { $pid } did not exit within { $seconds }s of SIGTERM
sim-error-signal = cannot signal simulator process { $pid }: { $reason }
sim-error-unreachable = simulator process { $pid } runs but { $endpoint } does not answer: { $reason }
sim-error-serve = serving failed: { $reason }
error-file = { $path }: { $reason }
error-labs-dir-missing = --labs { $dir }: not a directory
error-report = { $reason }
error-output = cannot write output: { $reason }

## labs list and labs show (src/lab/show.rs)
labs-none-built-in = No labs are built into this binary. Use --labs DIR to read lab bundles from a directory.
labs-none-in-dir = No lab bundles in { $dir }.
labs-course = Course: { $title }
labs-column-title = TITLE
labs-column-tasks = TASKS
labs-column-points = POINTS
labs-not-in-course = { $mark } not in the course ({ $file })
labs-course-missing = { $at }: the course lists "{ $lab }", which has no lab bundle (see `lab-runner lint`)
labs-variant-heading = Variant { $variant } (instructors):
labs-quiz-answers-variantless = Quiz answers (instructors):
labs-quiz-answers = Quiz answers in this variant:
labs-answer-recorded = the value start recorded: { $fact }
labs-answers = { $answers }
labs-shortcuts = Shortcuts (selftest proves none passes):
labs-solutions = Other correct solutions (selftest proves each passes):
labs-stages = Stages:
labs-variants = Variants (default chosen from --seed):
labs-tasks = Tasks ({ $points } points):
labs-kind-task = task
labs-kind-quiz = quiz
labs-task = { $task } [{ $kind }, { $points } pts] { $title }
labs-needs = needs: { $needs }
labs-apply = apply: { $manifests }
labs-wait = wait: { $wait }
labs-stage-variant = variant { $variant }: { $manifests }

## The class commands' errors (src/class/).
class-kept-listen = which its learners' kubeconfigs name
class-kept-tls-san = which its learners' certificates and kubeconfigs carry
class-kept-processes = which stays the class's until `class down --purge` ends it
class-kept-variants = from which its learners' variants were chosen (`class start LAB` takes --seed or --variant for the next lab)
class-error-learner-count = --learners { $asked }: a class has 1 to { $max } learners
class-error-needs-learners = no class in { $dir } yet: give --learners N to create one
class-error-fewer-learners = --learners { $asked }: the class has { $recorded } learners and keeps every one (`class down --purge` ends the class)
class-error-differs = { $option } { $asked }: the class was created with { $recorded }, { $why }
class-error-other-lab = --lab { $asked }: the class runs { $running }; `lab-runner class start { $asked }` moves it to { $asked }
class-error-port-range = --listen { $addr }: { $learners } learners need ports { $first } to { $last }, beyond 65535
class-error-needs-tls-san = --listen { $ip }: a non-loopback address needs --tls-san NAME (the host name or IP learners reach this host by; their kubeconfigs and certificates use it)
class-error-port-in-use = --listen: port { $port } (learner { $learner }) is in use: { $reason }
class-error-unknown-learner = no learner { $name } in the class (learners: { $known })
class-error-no-learner-named = name the learners (e.g. learner-03), or `all`
class-error-learner-down = { $learner } is down: `lab-runner class restart { $learner }` first
class-error-locked-by = { $dir } is in use by `{ $command }` (pid { $pid }, since { $since }): wait for it to finish, or stop that process
class-error-locked = { $dir } is in use by another lab-runner class command
class-error-older-class-running = the class in { $dir } was started by an older lab-runner and still runs: `lab-runner class down --state-dir { $dir }`, then up again
class-error-no-class = no class in { $dir }: start one with `lab-runner class up --state-dir { $dir }`
class-error-learner = { $learner }: { $reason }
class-error-interrupted = class up interrupted: stopped { $count ->
    [one] { $count } learner
   *[other] { $count } learners
} it had started; the class record keeps the rest
class-error-no-lab = the class in { $dir } has no lab yet: `lab-runner class start LAB --state-dir { $dir }`, or name one with --lab
class-error-runtime = cannot start the runtime: { $reason }
class-error-newer-record = record version { $version }, written by a newer lab-runner (this one reads 1 and 2)
class-board-error-bind = --listen { $addr }: cannot listen: { $reason }
class-board-error-needs-token = --listen { $addr }: a board other hosts can reach shows every learner's work, so it needs --token (a secret of yours, or `--token generate` for one printed at start)
class-board-error-token = cannot make a token: { $reason }
class-board-error-no-contexts = { $path }: no context to grade
class-board-error-serve = board server: { $reason }
class-board-url = class board for { $lab }: { $url }
class-report-error-not-a-report = { $path }: not a lab-runner report (check --format json): { $reason }
class-report-error-mixed-labs = the reports grade different labs ({ $first } and { $other }): give the files of one lab
class-report-error-job-name = --job { $given }: expected NAMESPACE/NAME (e.g. lab-class/grade)
class-report-error-no-job = job { $namespace }/{ $name } not found in context { $context }, nor any result of it: start a run with `kubectl -n { $namespace } create job { $name } --from=cronjob/grade`
class-report-error-nothing = no report: give --state-dir DIR, report files, or --job NAMESPACE/NAME
class-state-up = up
class-state-down = down
class-state-gone = gone
action-read-job-results = reading the results of Job { $job }

## The class board's page (src/class/board/page.html); its script fills `%n` in.
board-page-title = Class board
board-page-learner = Learner
board-page-score = Score
board-page-unchanged = Unchanged for
board-page-stalled = stalled
board-page-stalled-title = no verdict has changed for a while
board-page-finished = done
board-page-evidence = Evidence
board-page-connecting = Connecting...
board-page-waiting = Grading every learner...
board-page-offline = Connection lost; reconnecting...
board-page-checked = Last checked:{" "}
board-page-round = {" "}(update { $n })
board-page-down = Cannot grade:
board-page-error = Cannot grade this cluster
board-page-english = English
board-page-japanese = 日本語

## How evidence names an object (src/grade/observed.rs `describe`).
object-node = node { $name }
object-of-kind = { $object }
object-unnamed = { $kind } (unnamed)
