# lab-runner の表示文（日本語）。en.ftl と同じ id と同じプレースホルダーを持つ
# （src/i18n/mod.rs のテストが確かめる）。コマンドと Kubernetes 自身のメッセージは
# バッククォートか引用符で示し、判定コード（PASS、FAIL、BLOCKED、ERROR）と列名は訳さない。

## check のレポート (src/report/mod.rs)
report-hint = ヒント { $tier }: { $text }
report-score = 得点 { $score }/{ $total }
report-stuck = 行き詰まったら: lab-runner check { $lab } --hint 1

## check --watch (src/report/live.rs, src/commands/check.rs)
watch-summary = { $open ->
    [0] 得点 { $score }/{ $total } — すべてのタスクが合格
   *[other] 得点 { $score }/{ $total } — 残り { $open } タスク
}
watch-watching = { $context } の { $lab } を監視中（Ctrl-C で停止）
watch-listing = 一覧を取得中… { $watching }
watch-reconnecting = { $feed } を再接続中: { $reason }
watch-reconnecting-note = 注意: { $feed } の監視を再接続中です（{ $reason }）。最後に見えたオブジェクトを使います
watch-ended = 監視を終了しました（{ $seconds } 秒、{ $evaluations }）: { $ending }
watch-ended-regressed = 監視を終了しました（{ $seconds } 秒、{ $evaluations }）: { $ending }。後退したタスク: { $tasks }
watch-evaluations = 評価 { $count } 回
watch-all-pass = すべてのタスクが合格
watch-stopped = 停止しました
watch-timed-out = { $timeout } で時間切れ

## check の根拠の枠 (src/engine/check.rs)
check-needs = 先に { $task } が必要（{ $status }）
check-not-graded = 未採点
check-held-both = { $apart } 間隔の 2 回の観測のどちらでも成立
check-observation-first = 観測 1/2（開始時）
check-observation-second = 観測 2/2（{ $apart } 後）
check-no-answer = まだ回答がありません: lab-runner answer { $lab } { $task } 値
check-no-answer-choices = まだ回答がありません: lab-runner answer { $lab } { $task } 値（値は { $values } のいずれか）

check-answer-right = 回答 "{ $answer }" は正解です
check-answer-wrong = 回答 "{ $answer }" は正しくありません
check-attempts-locked = { $limit } 回中 { $used } 回目の回答: 回答はロックされています
check-attempts-of = { $limit } 回中 { $used } 回目の回答
check-answered = { $count } 回回答しました
# The class board's quiz evidence, which never quotes an answer (src/engine/check.rs)
check-answer-right-concealed = 回答済み：正解
check-answer-wrong-concealed = 回答済み：不正解
check-no-answer-concealed = まだ回答していません
check-evidence-concealed = （回答がわかるおそれがあるため、ボードには表示しません）
check-value-concealed = ［回答］
## status (src/engine/status.rs, src/commands/status.rs)
status-daemonset = { $daemonset }（現在のリビジョン { $hash }）
status-revision-current = { $hash }（現在）
status-revision-old = { $hash }（旧）
status-not-wanted = { $state }（このノードには不要）
status-desired = Pod を動かすべきノード数（セレクタ、アフィニティ、taint による）
status-current = そのうち Pod があるノード数
status-ready = Pod が Ready のノード数
status-up-to-date = Pod が現在のテンプレートで動いているノード数
status-available = Pod が minReadySeconds の間 Ready を保っているノード数
status-misscheduled = 動かすべきでないノード上の Pod 数
status-unavailable = DESIRED - AVAILABLE。maxUnavailable のロールアウトを止めるもの
status-no-pod = Pod なし
status-no-pod-expected = Pod なし（ラボはこのノードに Pod を期待していますが、DaemonSet の対象外です）
status-gpu-nodes = GPU ノード（設定はラベル { $label } で選択）
status-no-gpu-nodes = 該当するノードはありません
status-quotas = チームのクォータ
status-no-quota = ResourceQuota がありません
status-not-started = ラボ { $lab }: このクラスタではまだ開始されていません
status-instructor = ラボ { $lab }: バリアント { $variant }、完了したステージ [{ $stages }]、記録した事実 [{ $facts }]（ハッシュで保存）
status-needs-target = status にはラボか --daemonset NAMESPACE/NAME を指定してください
status-bad-daemonset = --daemonset には NAMESPACE/NAME を指定してください（指定された値: "{ $given }"）

## reset の計画と実行結果 (src/engine/reset_plan.rs, src/engine/reset.rs, src/commands/reset.rs)
reset-delete-created-by-lab = { $object } を削除（ラボが作成）
reset-delete-created-by-learner = { $object } を削除（開始後に受講者が作成）
reset-part-labels = ラベル
reset-part-annotations = アノテーション
reset-restore = { $object } の { $parts } を復元（開始前から存在）
reset-keep-existed = { $object } を保持（開始前から存在）
reset-keep-holds-foreign = { $object } を保持（ラボのものではないオブジェクトが残っている: { $held }）
reset-more = ほか { $count } 個
reset-keep-owned = { $object } を保持（ラボ { $lab } が所有）
reset-keep-learner-object = { $object } を保持（受講者が作成。このラボは受講者のオブジェクトを残す）
reset-hand-over = { $object } をラボ { $lab } に引き継ぐ（まだ使用中）
reset-label-removed = { $key } を削除
reset-restore-node-labels = Node { $node } のラベルを復元（{ $changes }）
reset-restore-configmap = ConfigMap { $namespace }/{ $name } を記録したデータに復元
reset-delete-configmap-new = ConfigMap { $namespace }/{ $name } を削除（ラボの開始前には存在しなかった）
reset-apply-stage = ステージ { $stage } を再適用
reset-delete-inventory = ConfigMap { $namespace }/{ $name } を削除（インベントリ。ラボは開始前の状態に戻る）
reset-delete-inventory-and-namespace = ConfigMap { $namespace }/{ $name } を削除（インベントリ。ラボは開始前の状態に戻る）し、Namespace { $namespace } も削除（ほかに何もない）
reset-kept-changed-hands = { $object } を保持: 計画を立てた後で持ち主が変わった
reset-would = reset { $lab } が行うこと:
reset-will = reset { $lab } が行うこと:
reset-proceed = 続けますか？ [y/N]
reset-done = reset { $lab } の結果:
reset-needs-yes = reset { $lab } はオブジェクトを削除します。標準入力が端末ではないので、確認として --yes を付けてください（計画を見るには --dry-run）
reset-cancelled = reset を取り消しました

## 列挙
list-separator = 、
list-separator-and = ・
list-and = { $init }・{ $last }

## start と answer (src/commands/start.rs, src/commands/answer.rs)
start-done = { $lab } を開始しました: { $count } 個のオブジェクトを適用
start-done-variant = { $lab } を開始しました（バリアント { $variant }）: { $count } 個のオブジェクトを適用
start-variant-prompt = ラボ { $lab } は別のバリアントで開始されていて、その故障が適用済みです。別のバリアントで開始するとそれを置き換え、回答は消えます。続けますか？ [y/N]
start-variant-prompt-revealed = ラボ { $lab } は別のバリアント（バリアント { $running }、指定は { $wanted }）で開始されていて、その故障が適用済みです。別のバリアントで開始するとそれを置き換え、回答は消えます。続けますか？ [y/N]
start-variant-change-revealed = ラボ { $lab } はバリアント { $running } で開始されていて、その故障が適用済みです。{ $wanted } で開始するとそれを置き換え、回答は消えます。続けるには --yes を付けてください（標準入力が端末ではありません）
start-cancelled = start を取り消しました
start-incomplete-before = ラボ { $lab } の開始が終わっていません（最初のステージが終わる前に止まりました）。`lab-runner start { $lab }` をもう一度実行すると再開します
start-incomplete-after = ラボ { $lab } の開始が終わっていません（ステージ { $stages } の後で止まりました）。`lab-runner start { $lab }` をもう一度実行すると再開します
start-waiting = 待機中: { $kind } { $target } が{ $condition }になるのを待っています
start-condition-rolled-out = ロールアウト完了
start-condition-available = 利用可能
start-condition-established = 確立
start-condition-stalled = 意図どおり停滞した状態
start-condition-condition = 状態 { $condition }
start-condition-event = Event { $reason } が記録された状態
start-condition-cel = `{ $expression }` が true の状態
start-collision = start { $lab } は何も変更せずに中止しました: { $objects } はすでに存在し、このラボが作成したものではありません（{ $count } 件）。削除するか名前を変えるか、別のクラスタを使ってください。引き継ぐつもりなら、ラボのステージの `adopt:` に宣言してください
answer-no-task = ラボ { $lab } にタスク "{ $task }" はありません
answer-not-a-quiz = タスク { $task } はクイズではありません。`check` がクラスタから採点します
answer-not-started = ラボ { $lab } はこのクラスタで開始されていません。先に `lab-runner start { $lab }` を実行してください
answer-not-recorded = { $reason }。回答は記録していません
answer-recorded = { $task } の回答を記録しました。`lab-runner check { $lab }` で採点されます
answer-recorded-attempt = { $task } の回答を記録しました（{ $limit } 回中 { $attempt } 回目）。`lab-runner check { $lab }` で採点されます

## demo と selftest (src/commands/demo.rs, src/commands/selftest.rs)
demo-simulator-at = シミュレーター { $endpoint }（{ $speed } 倍速）
demo-reference-solution = 模範解答をタスクごとに実行
demo-command-running = … 実行中（{ $seconds } 秒経過）
demo-command-took = … { $seconds } 秒かかりました
selftest-bad-speed = --speed { $speed }: 速度の倍率は 0 より大きい数にしてください
selftest-fixture-applied = { $dir } のオブジェクトを { $count } 個適用しました
selftest-variants-passed = selftest { $lab }: { $count } 個中 { $passed } 個のバリアントが合格

## sim (src/commands/sim.rs)
sim-stale-pid = 注意: { $dir } に残っていた古い pid ファイルを削除しました（プロセス { $pid } はもうありません）
sim-running = シミュレーターを { $endpoint } で起動しました（pid { $pid }）
sim-status-running = シミュレーター稼働中
sim-store-kept = 既存のストアをそのまま使用
sim-store-seeded = { $count } 個のオブジェクトを投入
sim-serving = シミュレーターが { $endpoint } で稼働中（pid { $pid }、{ $store }）
sim-contexts = コンテキスト: { $admin }（管理者）、{ $viewer }（読み取り専用）
sim-press-ctrl-c = Ctrl-C で停止します。
sim-stopped = シミュレーターを停止しました
sim-stopped-pid = シミュレーターを停止しました（pid { $pid }）

## lint の集計 (src/commands/lint.rs)
lint-nothing = lint: 確認するラボがありません
lint-clean = lint: { $count } 個のラボに問題はありません（{ $ids }）
lint-problems = lint: { $labs } 個中 { $failing } 個のラボに { $problems } 件の問題
lint-problems-course = lint: コースファイルに { $problems } 件の問題
lint-problems-course-and-labs = lint: コースファイルと { $labs } 個中 { $failing } 個のラボに { $problems } 件の問題

## エラー (src/commands/mod.rs)
error-line = エラー: { $message }
error-kubeconfig = kubeconfig { $path } を使えません: { $reason }（`lab-runner sim up` でシミュレーションのクラスタを起動すると kubeconfig が書き出されます。別のファイルは --kubeconfig FILE で指定します）
error-unknown-context = kubeconfig { $path } にコンテキスト "{ $context }" はありません。あるコンテキスト: { $known }
error-unreachable = { $server } のクラスタ（コンテキスト { $context }）に接続できません: { $reason }。クラスタは動いていますか？（`lab-runner sim up` でシミュレーションのクラスタを起動できます）
error-variant-change = ラボ { $lab } は別のバリアントで開始されていて、その故障が適用済みです。別のバリアントで開始するとそれを置き換え、回答は消えます。続けるには --yes を付けてください（または先に `lab-runner reset { $lab }`）
error-unknown-lab = "{ $id }" という名前のラボはありません。あるラボ: { $known }
error-unknown-built-in-lab = "{ $id }" という名前のラボは組み込まれていません（組み込みのラボ: { $known }）。ディレクトリにあるラボは `--labs DIR` か `LAB_RUNNER_LABS=DIR` で読み込みます
error-invalid-bundle = ラボのバンドル { $bundle } に { $count } 件の問題があります
error-invalid-course = コースファイル { $file } に { $count } 件の問題があります
error-not-a-bundle = { $path }: ラボのバンドルではありません（lab.yaml がありません）

## Issue #19: 採点の根拠、ローダーと lint の問題、エンジンのエラー、selftest の記録、デモ
## (src/grade/**, src/lab/loader/**, src/engine/**, src/commands/demo.rs)。
## Kubernetes 自身のメッセージはバッククォート、ライブラリのメッセージは「」で引用する。

## 採点: マッチャー (src/grade/mod.rs, observed.rs, partial.rs, path.rs)
grade-no-expectations = このタスクには判定する項目がありません
grade-listing-failed = { $kind } を一覧できませんでした: { $reason }
grade-unreadable = { $object } は一覧に含まれていますが読み取れません（{ $reason }）。この確認の対象かもしれないため判定できません
grade-not-observed = { $kind } を観測できませんでした
grade-cannot-judge = { $reason }。{ $target } を判定できません
grade-none-exists = { $target } は存在しません
grade-does-not-exist = { $object } は存在しません
grade-object-matches = { $object }: 期待どおり
grade-object-detail = { $object }: { $detail }
grade-exists-expected-none = { $object } が存在します（存在しないはず）
grade-count = { $target } を { $count } 個観測（期待値 { $op } { $value }）
grade-quantity-absent = { $object }: { $path } がありません（期待値 { $op } { $value }）
grade-quantity-is = { $object }: { $path } は { $found }（期待値 { $op } { $value }）
grade-cel-result = `{ $expression }` は { $result } です
grade-cel-result-read = `{ $expression }` は { $result } です: { $values }
grade-cel-value = { $selection } = { $value }
grade-cel-value-list = { $selection }: 要素 { $count } 個
grade-cel-value-error = { $selection }: { $error }
grade-cel-failed = `{ $expression }` を評価できません: { $error }
grade-cel-not-bool = `{ $expression }` の結果は { $result } で、true でも false でもありません
grade-cel-compile = `{ $expression }` をコンパイルできません: { $error }
grade-cel-ambiguous = { $target } は（複数の名前空間で）{ $count } 個のオブジェクトを選びます。ターゲットに namespace を指定してください
grade-quantity-not-a-quantity = { $object }: { $path } は { $found } で、数量ではありません（期待値 { $op } { $value }）
grade-error-missing-expected-file = 期待するオブジェクトのファイル { $file } はバンドルにありません
grade-error-expected-source = `expected` と `expectedFile` のどちらか一方だけを指定してください
grade-error-undeclared-list = { $path } のリストには意味が宣言されていません。`lists` に contains、exactly、each、none のいずれかで追加してください
grade-error-each-needs-one = { $path } のリストは `each` と宣言されています。観測したすべての要素が一致すべき要素を、ちょうど 1 つ指定してください
grade-error-non-string-label = { $path } が文字列ではありません。ラベル、アノテーション、ノードセレクタの値は文字列です（引用符で囲んでください）
grade-error-not-a-quantity = 値 { $value } は Kubernetes の数量ではありません
grade-error-hard-not-a-quantity = hard の値 { $value } は Kubernetes の数量ではありません
grade-error-indexed-list-path = リストのパス { $path } にインデックスを含めることはできません
grade-error-hash = { $object } のリビジョンハッシュを計算できません
target-named = { $target }
target-with-labels = ラベル { $labels } を持つ { $target }
target-in-namespace = 名前空間 { $namespace } の { $kind }
target-in-namespace-with-labels = 名前空間 { $namespace } のラベル { $labels } を持つ { $kind }
partial-the-object = オブジェクト
partial-present = { $path } は { $found }
partial-missing = { $path } がありません（期待値 { $expected }）
partial-not-a-map = { $path } は { $found }（マップのはず）
partial-differs = { $path } は { $found }（期待値 { $expected }）
partial-not-a-list = { $path } は { $found }（リストのはず）
partial-no-element = { $path } に { $item } と一致する要素がありません（最も近い要素: { $closest }）
partial-no-element-empty = { $path } に { $item } と一致する要素がありません（リストが空です）
partial-length = { $path } の要素は { $found } 個（期待はちょうど { $expected } 個）
partial-each-empty = { $path } が空か存在しません（すべての要素が一致するはず）
partial-none-expected = { $path } が { $item } に一致します（一致する要素はないはず）
path-invalid = パス { $path } が正しくありません: { $reason }（キーはドットで区切り、`["key.with.dots"]` や `[N]` も使えます）
path-syntax-unclosed = `[` が閉じていません
path-syntax-empty-key = キーが空です
path-syntax-bad-bracket = `[…]` には数字か引用符で囲んだキーを書きます
path-syntax-trailing-dot = 末尾に `.` があります
path-syntax-dot-expected = `]` の後には `.` が必要です
path-syntax-empty-path = パスが空です
value-absent = なし
list-separator-clause = 、

## 採点: ロールアウトと開始時に記録したノード (src/grade/builtin.rs, captured.rs)
grade-rollout-counters = { $daemonset } の状態: DESIRED { $desired }、CURRENT { $current }、READY { $ready }、UP-TO-DATE { $updated }、AVAILABLE { $available }
grade-rollout-no-pod = node { $node }: Pod なし
grade-rollout-pod = node { $node }: Pod { $pod }、リビジョン { $revision }、イメージ { $image }、{ $state }
grade-rollout-unwanted-pod = node { $node }: DaemonSet がもう求めていないノードで Pod { $pod } が動いています
grade-rollout-old-revision = node { $node }: まだ旧リビジョン { $revision } のままです（{ $state }）
grade-rollout-new-pod = node { $node }: 新しい Pod { $pod } は { $state }
grade-rollout-unavailable = numberUnavailable が { $unavailable }
grade-rollout-desired-at-start = DESIRED は { $desired } ですが、開始時にラボのノードセレクタに一致したノードは { $nodes } 個です
grade-rollout-desired-now = DESIRED は { $desired } ですが、ラボのノードセレクタに一致するノードは { $nodes } 個です
grade-rollout-still-broken = テンプレートがまだ壊れたときのままです
grade-rollout-converged = 収束: すべてのノードが同じリビジョンで、利用不可の Pod はありません
grade-rollout-not-converged = 未収束: { $problem }
grade-rollout-not-stalled = 停滞していません: すべてのノードが落ち着いています
grade-rollout-stalled = 停滞: { $problem }
grade-captured-recreated = ノード { $node } は開始時の同名のノードではありません（作り直されています）
grade-captured-no-longer-matches = ノード { $node } はもう { $selector } に一致しません
grade-captured-cordoned = ノード { $node } は cordon されています
grade-captured-gone = 開始時に { $selector } に一致したノードのうち { $count } 個がもう存在しません
grade-captured-new = ノード { $node } は開始時に { $selector } に一致していなかったので数えません

## 採点: クォータ、クイズ、スケジュール可否、デバイスプラグイン設定 (src/grade/builtin.rs, src/engine/check.rs)
grade-probe-not-sent = クォータ超過の確認（dryRun=All）を送っていません
grade-probe-failed = クォータ超過の確認に失敗しました: { $reason }
grade-probe-admitted = { $namespace } でクォータを超える Pod（dryRun=All）が受け付けられました
grade-probe-rejected = { $namespace } でクォータを超える Pod（dryRun=All）は拒否されました: `{ $message }`
probe-file-missing = { $file } はバンドルにありません
probe-not-an-object = { $file } はオブジェクトではありません
probe-request-failed = { $reason }
grade-quota-hard-not-a-quantity = hard の値 { $value } は数量ではありません
grade-quota-hard-is = resourcequota { $quota }: hard の { $resource } は { $hard }
grade-quota-hard-differs = resourcequota { $quota }: hard の { $resource } は { $found }（期待値 { $expected }）
grade-quota-hard-missing = resourcequota { $quota } には hard の { $resource } がありません（あるキー: { $keys }）
grade-quota-none = 名前空間 { $namespace } に ResourceQuota がありません
grade-not-started = このクラスタではラボが開始されていません（インベントリがありません）
grade-fact-not-captured = start が事実 { $fact } を記録していません。`lab-runner start` をもう一度実行してください
grade-quiz-unjudgeable = このクイズには事実も正解の候補もありません
grade-no-pod-matches = { $target } に一致する Pod がありません
grade-pod-scheduled = { $object }: ノード { $node } にスケジュール済み
grade-pod-not-scheduled = { $object }: スケジュールされていません: `{ $message }`
grade-pod-not-scheduled-no-condition = { $object }: スケジュールされていません（PodScheduled=True の condition がありません）
grade-pod-not-unschedulable-yet = { $object }: まだスケジュール不可になっていません（PodScheduled=False の condition がありません）
grade-unschedulable = { $object }: スケジュールできません: `{ $message }`
grade-unschedulable-other-reason = { $object }: スケジュールできませんが、理由が { $reason } ではありません: `{ $message }`
grade-schedulable-no-pods = schedulable チェックに `pods` も `podFile` もありません
grade-pod-file-missing = Pod のファイル { $file } はバンドルにありません
grade-pod-file-not-a-pod = Pod のファイル { $file } は Pod ではありません
grade-cannot-fit = { $file } の配置を計算できません: { $reason }
grade-pod-file-fits = { $file } はノード { $nodes } に配置できます
grade-pod-file-fits-expected-none = { $file } はノード { $nodes } に配置できます（どのノードにも配置できないはず）
grade-plugin-no-node = チェックのノードセレクタに一致するノードがありません
grade-plugin-no-label = node { $node }: ラベル { $label } がありません
grade-plugin-not-a-key = node { $node }: { $label }={ $config } は ConfigMap { $configmap } のキー [{ $keys }] にありません
grade-plugin-other-config = node { $node }: { $label }={ $config }（期待値 { $expected }）
grade-plugin-unparsable = node { $node }: 設定 { $config } を読めません: 「{ $reason }」
grade-plugin-mig-allocatable = node { $node }: allocatable の { $resource } は { $found }（GFD ラベルからは { $expected }）
grade-plugin-mig-in-effect = node { $node }: 設定 { $config } が有効（MIG mixed、{ $advertised }）
grade-plugin-no-gpu-count = node { $node }: まだ nvidia.com/gpu.count ラベルがありません（GFD がノードにラベルを付けていません）
grade-plugin-replicas = node { $node }: nvidia.com/gpu.replicas は { $found }（設定 { $config } では { $expected }）
grade-plugin-strategy = node { $node }: nvidia.com/gpu.sharing-strategy は { $found }（設定 { $config } では { $expected }）
grade-plugin-allocatable = node { $node }: allocatable の { $resource } は { $found }（設定 { $config } では GPU { $gpus } 個 × { $replicas } = { $expected }）
grade-plugin-in-effect = node { $node }: 設定 { $config } が有効（{ $strategy }、{ $resource } { $advertised }）

## 採点: アラートルール (src/grade/alert.rs)
alert-does-not-parse = 解析できません: 「{ $reason }」
alert-unsupported = { $construct } を使っていますが、エンジンの評価器はこれに対応していません
alert-construct-offset = offset または @
alert-construct-or-in-selector = セレクタ内の `or`
alert-construct-aggregation-parameter = パラメータ付きの集約 { $op }
alert-construct-aggregation-scalar = スカラーに対する { $op }
alert-construct-aggregation = 集約 { $op }
alert-construct-vector-of-vector = ベクトルに対する vector()
alert-construct-function = 関数 { $name }()
alert-construct-range-selector = 範囲セレクタ
alert-construct-subquery = サブクエリ
alert-construct-string-literal = 文字列リテラル
alert-construct-extension = 拡張
alert-construct-operator = これらのオペランドに対する演算子 { $op }
alert-construct-scalar-comparison = bool なしのスカラー同士の比較 { $op }
alert-yields-scalar = 結果がベクトルではなくスカラーになります
alert-breakage-image = 新しいイメージを取得できない
alert-breakage-unschedulable = 新しい Pod をスケジュールできない
alert-breakage-desired-dropped = テンプレートがノードを対象にしなくなった（DESIRED が減った）
alert-expr-error = { $object }: アラート { $alert } の式 { $expr }: { $reason }
alert-fires-on-every-breakage = { $object }: アラート { $alert } は { $daemonset } のどの種類の故障でも発火し、復旧した状態では発火しません（for: { $duration }）
alert-for-too-short = { $object }: アラート { $alert }: `for: { $duration }` が { $least } より短いです
alert-never-fires = { $object }: アラート { $alert } は { $daemonset } のロールアウトが壊れても発火しません
alert-misses = { $object }: アラート { $alert } は、{ $breakages }ときに発火しません
alert-nor-when = ときにも、
alert-fires-when-restored = { $object }: アラート { $alert } は { $daemonset } が復旧した状態でも発火します
alert-no-rule = { $target } にアラートルールがありません

## ローダーの問題 (src/lab/loader/**)
loader-yaml-error = YAML を読めません: 「{ $reason }」
loader-yaml-error-at = { $path }: YAML を読めません: 「{ $reason }」
loader-cannot-read = 読めません: { $reason }
loader-cannot-read-dir = { $path } を読めません: { $reason }
loader-label-here = ここ
loader-label-listed-again = 2 回目
loader-label-no-such-lab = そのラボはありません
loader-label-this-id = この id
loader-label-this-lab = このラボ
loader-label-duplicate = 重複
loader-label-this-shortcut = このショートカット
loader-label-in-this-stage = このステージ内
loader-label-this-stage = このステージ
loader-label-this-path = このパス
loader-label-this-file = このファイル
loader-label-itself = 自分自身
loader-label-unknown-task = 不明なタスク
loader-label-closes-cycle = ここで循環します
loader-label-this-task = このタスク
loader-label-in-this-task = このタスク内
loader-course-twice = コースにラボ { $lab } が 2 回あります（最初は { $line } 行目）
loader-course-no-bundle = コースにあるラボ { $lab } にはバンドルがありません（あるラボ: { $labs }）
loader-course-no-bundle-help = lab.yaml を置いたバンドルのディレクトリ { $lab }/ を追加するか、この項目を削除してください
loader-lab-id-invalid = ラボの id { $id } には英小文字、数字、'-' だけを使ってください
loader-lab-id-not-dir = ラボの id { $id } がバンドルのディレクトリ名 { $dir } と違います
loader-lab-id-not-dir-help = ディレクトリ名か id を変えてください。`labs list` と `start` はディレクトリ名でラボを探します
loader-no-stages = ラボにステージがありません
loader-no-tasks = ラボにタスクがありません
loader-duplicate = { $what } が重複しています（最初の定義は { $line } 行目）
loader-duplicate-variant = バリアントの id { $id }
loader-duplicate-stage = ステージの id { $id }
loader-duplicate-task = タスクの id { $id }
loader-duplicate-shortcut = タスク { $task } のショートカットの id { $id }
loader-shortcut-no-commands = タスク { $task } のショートカット { $shortcut } にコマンドがありません
loader-stage-unknown-variant = ステージ { $stage } にラボが宣言していないバリアント { $variant } があります（バリアント: { $known }）
loader-stage-unknown-variant-help = 最上位の `variants` に宣言してください
loader-stage-missing-variant = ステージ { $stage } にはバリアントがありますが、ラボのバリアント { $variant } の分がありません
loader-wait-needs-symptom = ステージ { $stage }: { $target } の stalledAsIntended の待機には `symptom` が必要です
loader-wait-needs-symptom-help = symptom は imagePullBackOff、unschedulable、desiredDropped のいずれかです
loader-wait-symptom-unused = ステージ { $stage }: `symptom` を取るのは stalledAsIntended の待機だけです（{ $target } の待機）
loader-wait-needs-field = ステージ { $stage }: { $target } の { $wait } の待機には `{ $field }` が必要です
loader-wait-field-unused = ステージ { $stage }: `{ $field }` は { $wait } の待機には使えません（{ $target } の待機）
loader-wait-stalled-daemonset = ステージ { $stage }: stalledAsIntended が確かめるのは DaemonSet の壊れたロールアウトですが、{ $target } は DaemonSet ではありません
loader-wait-stalled-daemonset-help = ほかの種類には、状態（`for: condition`）、Event（`for: event`）、CEL 式（`for: cel`）を待ってください
loader-label-this-fact = この事実
loader-duplicate-fact = 事実の id { $id }
loader-fact-id-invalid = 事実の id { $id } には英小文字、数字、'-' だけを使い、`variant` 以外にしてください
loader-fact-source = 事実 { $id } には `path` と `expression` のどちらか一方だけを指定してください
loader-fact-path-needs-name = 事実 { $id } は 1 つのオブジェクトの `path` を読みます。`from` に `name` を指定してください
loader-quiz-unknown-fact = クイズ { $task } が比べる事実 { $fact } を記録するステージがありません（事実: { $known }）
loader-quiz-unknown-fact-help = 事実は `variant`、`affectedNode`、ステージの `facts:` にある id です
loader-manifest-outside = マニフェスト { $path } はバンドル内の相対パスにしてください
loader-file-outside = ファイル { $path } はバンドル内の相対パスにしてください
loader-manifest-missing = マニフェスト { $path } がありません（{ $shown }）
loader-file-missing = ファイル { $path } がありません（{ $shown }）
loader-manifest-unreadable = マニフェスト { $path } を読めません: { $reason }
loader-file-unreadable = ファイル { $path } を読めません: { $reason }
loader-manifest-empty = マニフェストにオブジェクトがありません
loader-document-unnamed = { $document } 番目のドキュメントには apiVersion、kind、metadata.name が必要です
loader-file-not-a-map = ファイルには YAML のマップ（部分オブジェクト）を 1 つだけ書いてください
loader-needs-itself = タスク { $task } が自分自身を needs に挙げています
loader-needs-unknown = タスク { $task } の needs にある { $need } というタスクはありません（タスク: { $known }）
loader-needs-cycle = `needs` が循環しています: { $cycle }
loader-quiz-without-quiz = クイズのタスク { $task } に `quiz` の期待がありません
loader-quiz-in-task = タスク { $task } に `quiz` の期待がありますが、`kind: quiz` ではありません
loader-expectation-problem = タスク { $task } の { $number } 番目の期待（{ $kind }）: { $problem }
loader-schedulable-source = `pods` と `podFile` のどちらか一方だけを指定してください
loader-broken-stage-unknown = brokenStage { $stage } はラボのステージではありません
loader-quiz-nothing-accepted = `fact`、`accept`、`acceptByVariant` のいずれかを指定してください
loader-quiz-unknown-variant = acceptByVariant に不明なバリアント { $variant } があります
loader-quiz-not-a-choice = 正解 { $value } が `choices` にありません
loader-quiz-no-attempts = `attempts` は 1 以上にしてください
loader-cel-no-target = `target`（`object` として束縛）か `targets`（それぞれの名前で束縛）を指定してください
loader-cel-target-name = ターゲット名 { $name } は CEL の識別子（英字、数字、`_`）にし、`object`、`answers`、`fact`、予約語、型名以外にしてください
loader-cel-error = CEL 式をコンパイルできません: { $error }
loader-cel-error-help = 式で使える変数: { $variables }
loader-wait-problem = ステージ { $stage } の { $target } の待機: { $problem }
loader-fact-problem = 事実 { $id }: { $problem }

## lint の作成ルール (src/engine/lint.rs, src/commands/lint.rs)
warning-line = 警告: { $message }
lint-text-missing = `{ $lang }` のテキストがありません: { $what }
lint-what-lab-title = ラボのタイトル
lint-what-lab-briefing = ラボの説明
lint-what-field = { $field }
lint-label-unknown-field = 不明なフィールド
lint-unknown-kind = { $api_version } に kind { $kind } はありません
lint-unknown-field = { $kind } にフィールド { $path } はありません
lint-unknown-field-null = { $kind } にフィールド { $path } はありません。`null` は「ない」という意味なので、どのオブジェクトでも成り立ってしまいます
lint-did-you-mean = { $suggestion } のことですか？
lint-known-fields = { $parent } のフィールド: { $known }
lint-below-scalar = { $kind }: { $path } は { $type_ } で、その下にフィールドはありません
lint-is-a-list = { $kind }: { $path } はリストです。インデックスを付けるか、要素をリストとして書いてください
lint-not-a-list = { $kind }: { $path } はリストではありません
lint-cel-list = { $variable } はターゲットが選ぶ { $kind } オブジェクトのリストで、フィールドはありません。`{ $variable }.all(x, …)`、`.exists`、`.map` かインデックスを使ってください
lint-what-variant-description = バリアント { $variant } の説明
lint-what-task-title = タスク { $task } のタイトル
lint-what-task-description = タスク { $task } の説明
lint-what-task-hint = タスク { $task } のヒント { $tier }
lint-points = タスク { $task } の点数が { $points } です。点数は 0 より大きくしてください
lint-no-hints = タスク { $task } にヒントがありません
lint-no-hints-help = ヒントは段階的に: きっかけ、手がかり、そしてコマンド
lint-no-solution = タスク { $task } に模範解答がありません
lint-no-solution-help = `selftest` は各タスクの `solution` のコマンドを実行して、タスクが合格できることを確かめます
lint-label-passes-empty = 空のクラスタで合格します
lint-vacuous = タスク { $task } は空のクラスタで合格してしまいます（{ $evidence }）
lint-vacuous-help = 受講者の作業があって初めて成り立つ期待を追加してください（`match` や `count >= 1` など）
lint-no-shortcuts = タスク { $task } にショートカットが宣言されていません
lint-no-shortcuts-help = 受講者がタスクをせずに PASS を得ようとする試みを `shortcuts:` に挙げてください。`selftest` がどれも合格しないことを確かめます

## エンジンのエラー (src/engine/**)
error-no-current-context = コンテキストの指定がなく、current-context も設定されていません
error-no-answer = { $seconds } 秒以内に応答がありません
error-api = { $action }に失敗しました: { $reason }
error-preflight = クラスタがラボ { $lab } の条件を満たしていません: { $reason }
error-timed-out = { $what }を { $seconds } 秒待ちましたが時間切れです: { $seen }
error-not-reproduced = 故障が再現しませんでした: { $reason }
error-inventory = ラボのインベントリを読めません: { $reason }
error-unknown-stage = ラボ { $lab } にステージ { $stage } はありません（ステージ、順に: { $known }）
error-unknown-variant = ラボ { $lab } にバリアント { $variant } はありません（バリアント: { $known }）
action-access-review = このユーザーに許された操作の問い合わせ（SelfSubjectAccessReview）
action-apply = { $object } の適用
action-create-namespace = 名前空間 { $namespace } の作成
action-delete = { $object } の削除
action-discover = サーバーが提供する種類の探索（discovery）
action-list = { $plural } の一覧取得
action-list-in = { $namespace } の { $plural } の一覧取得
action-list-nodes = ノードの一覧取得
action-list-nodes-labels = ラベルを記録するためのノードの一覧取得
action-list-nodes-preflight = 事前確認のためのノードの一覧取得
action-list-nodes-to-record = 記録のためのノードの一覧取得
action-post = { $path } への POST
action-read = { $object } の読み取り
action-read-inventory = インベントリ { $object } の読み取り
action-resolve = discovery による { $kind } の解決
action-restore = { $object } の復元
action-restore-configmap = ConfigMap { $object } の復元
action-restore-node-labels = ノード { $node } のラベルの復元
action-watch = { $feed } の監視
action-write-inventory = インベントリ { $object } の書き込み
watch-stopped-before-listed = 一覧を取得する前に止まりました
inventory-field-unreadable = フィールド { $key }: { $reason }
apply-unnamed = ラボ { $lab } の { $kind } のマニフェストに metadata.name がありません
answer-not-one-line = { $task } の回答は空でない 1 行にしてください。回答は記録されていません
answer-not-a-node = { $value } はこのクラスタのノードではありません（`kubectl get nodes` を参照）。回答は記録されていません
answer-not-a-choice = { $value } は { $task } の選択肢（{ $choices }）のいずれでもありません。回答は記録されていません
answer-locked = { $task } はロックされています（{ $limit } 回の回答をすべて使いました）。回答は記録されていません
class-kubeconfig-unreadable = kubeconfig { $path } を読めません: { $reason }
class-kubeconfig-no-learner = { $path } に受講者のコンテキストがありません（閲覧用のコンテキストだけか、何もありません）
class-kubeconfig-dangling-cluster = { $path }: コンテキスト { $context } が、ファイルに定義されていないクラスタを指しています
class-kubeconfig-dangling-user = { $path }: コンテキスト { $context } が、ファイルに定義されていないユーザーを指しています
class-kubeconfig-name-count = kubeconfig { $inputs } 個に対して --name が { $names } 回指定されました。kubeconfig ごとに順に 1 回ずつ指定してください
preflight-nodes = { $selector } に一致するノードが少なくとも { $min } 個必要です（{ $description }）が、{ $total } 個中 { $found } 個でした。ノードにラベルを付けるか、`lab-runner sim up` で組み込みのシミュレーターを起動してください
preflight-nodes-advertising = { $resources } を公開し { $selector } に一致するノードが少なくとも { $min } 個必要です（{ $description }）が、{ $total } 個中 { $found } 個でした。ノードにラベルを付けるか、`lab-runner sim up` で組み込みのシミュレーターを起動してください
preflight-denied = このユーザーには { $denied } の権限がありません。`start` には cluster-admin 権限のある kubeconfig のコンテキストを使ってください（`kubectl auth can-i patch daemonsets -n NAMESPACE` で確認できます）
preflight-denied-cluster = { $resource } の patch
preflight-denied-in = 名前空間 { $namespace } での { $resource } の patch
reset-needs-variant = ラボ { $lab } のステージ { $stage } はバリアントごとに異なりますが、このクラスタにはバリアントが記録されていません。先に一度 `lab-runner start { $lab } --variant V` を実行してください
reset-wait-deleted = { $object } が削除されるの
reset-still-there = まだ残っています（finalizers [{ $finalizers }]）
start-created-meanwhile = start { $lab } はステージ { $stage } で止まりました: その間に別の誰かが { $object } を作成しました。それを削除してから `lab-runner start { $lab }` をもう一度実行すると再開します
start-daemonset-unparsable = DaemonSet { $name } を解釈できません: { $reason }
start-wait-no-symptom = { $target } の stalledAsIntended の待機に symptom がありません
start-waiting-for = { $kind } { $target } が{ $condition }になるの
start-seen-not-yet = まだ { $condition } ではありません
start-seen-desired-zero = Pod を求めるノードがまだありません（DESIRED 0）
start-seen-rollout = `{ $message }`
start-seen-replicas = { $replicas } 個中 { $available } 個が更新済みで利用可能
start-seen-pod = { $node } の { $pod }: { $state }
start-seen-pods = { $pods }
start-seen-no-pods = Pod がありません
start-seen-desired = DESIRED { $desired }、Pod が求められていないノード: { $nodes }
start-seen-stale = status は世代 { $observed } のもので、オブジェクトは世代 { $generation } です
start-seen-no-conditions = 状態（conditions）がまだありません
start-seen-conditions = 状態: { $conditions }
start-seen-no-events = このオブジェクトと所有するオブジェクトの Event { $reason } はまだありません
start-seen-events = このオブジェクトと所有するオブジェクトの Event { $reason } はまだありません。このオブジェクトの Event: { $reasons }
start-seen-cel = `{ $expression }` は { $result } です
start-seen-cel-error = `{ $expression }` を評価できません: { $error }
start-fact-unreadable = 事実 { $fact } を読み取れません: { $reason }
start-fact-not-one = { $target } が選ぶオブジェクトは { $count } 個です。事実のパスはちょうど 1 個のオブジェクトから読みます
start-fact-absent = { $target } に { $path } がありません
start-fact-cel = { $reason }
start-fact-not-scalar = 値が文字列、数値、真偽値のいずれでもありません: { $value }
start-too-many-pulling = ImagePullBackOff の Pod が { $count } 個あります。ロールアウトはちょうど 1 個で止まるはずです: { $seen }
start-too-many-unschedulable = スケジュールできない Pod が { $count } 個あります。ちょうど 1 個のはずです: { $seen }

## selftest の記録 (src/engine/selftest.rs) とデモ (src/commands/demo.rs)
selftest-header = { $name } の selftest
selftest-name-variant = { $lab }（バリアント { $variant }）
selftest-ok = 問題なし: { $seen }
selftest-failed = 失敗: { $message }
selftest-error = エラー: { $error }
selftest-verdict-passed = { $name } の selftest: 合格
selftest-verdict-failed-task = { $name } の selftest: ステップ「{ $step }」で失敗（タスク { $task }）
selftest-verdict-failed-step = { $name } の selftest: ステップ「{ $step }」で失敗
selftest-verdict-failed = { $name } の selftest: 失敗
selftest-verdict-error = { $name } の selftest: ステップ「{ $step }」でエラー
selftest-step-reset = リセット
selftest-step-start = 開始
selftest-step-check-before = 模範解答の前のチェック
selftest-step-shortcuts = { $task } のショートカット
selftest-step-shortcut = ショートカット { $task }/{ $shortcut }
selftest-step-back = { $task } の模範解答の前に戻す
selftest-step-solution = 模範解答 { $task }
selftest-step-reset-after = 模範解答の後のリセット
selftest-step-check-after = リセット後のチェック
selftest-step-owned = リセット後のラボのオブジェクト
selftest-reset-done = { $count } ステップ
selftest-started = { $count } 個のオブジェクトを適用
selftest-started-variant = バリアント { $variant }、{ $count } 個のオブジェクトを適用
selftest-shortcuts-skipped = スキップ: このクラスタはチェックポイントを持たず、ショートカット（ノードの削除や cordon）を元に戻せません。{ $count } 個のショートカットはシミュレーターで実行されます
selftest-restored = 元に戻しました
selftest-no-solution = タスク { $task } に模範解答がありません
selftest-solution-failed = タスク { $task } の模範解答が失敗しました: { $reason }
selftest-command-failed = `{ $command }` が{ $exit }{ $stderr }
selftest-shortcut-failed = タスク { $task } のショートカット { $shortcut } を実行できませんでした: { $reason }
selftest-shortcut-passes = タスク { $task } がショートカット { $shortcut }（{ $description }）の後に合格します{ $evidence }
selftest-task-status = { $task } { $status }{ $evidence }
selftest-task-missing = タスク { $task } がレポートにありません
selftest-evidence = （{ $line }）
selftest-after-reset-not-failing = タスク { $task } がリセット後に { $status } です。開始時と同じく FAIL か BLOCKED のはずです{ $evidence }
selftest-not-passing-after-solution = タスク { $task } が模範解答の後に { $status } です。PASS のはずです{ $evidence }
selftest-regressed = タスク { $task } は模範解答の後に合格しましたが、タスク { $after } の模範解答の後に { $status } になりました{ $evidence }
selftest-all-pass = { $task } PASS。すべてのタスクが合格（得点 { $score }/{ $total }）
selftest-pass-rest = { $task } PASS。未解決: { $counts }
selftest-passes-before = タスク { $task } が模範解答の前に合格します{ $evidence }
selftest-passes-before-after = タスク { $task } が模範解答の前（タスク { $after } の模範解答の後）に合格します{ $evidence }
selftest-status-before = タスク { $task } が模範解答の前に { $status } です。FAIL か BLOCKED のはずです{ $evidence }
selftest-status-before-after = タスク { $task } が模範解答の前（タスク { $after } の模範解答の後）に { $status } です。FAIL か BLOCKED のはずです{ $evidence }
selftest-owned-same = 最初のリセットの後と同じ（{ $count } 項目を確認）
selftest-owned-differ = リセットで開始時の状態に戻りませんでした: { $problems }
selftest-fact-namespace = 名前空間 { $namespace } あり
selftest-fact-namespace-absent = 名前空間 { $namespace } なし
selftest-fact-node-label = ノード { $node } のラベル { $key }={ $value }
selftest-fact-node-label-absent = ノード { $node } のラベル { $key } なし
selftest-fact-configmap = ConfigMap { $object } のデータ { $data }
selftest-fact-configmap-absent = ConfigMap { $object } なし
selftest-left-after-reset = リセット後に残っている: { $fact }
selftest-missing-after-reset = リセット後に失われた: { $fact }
selftest-left-of-stage = リセット後に残っている: ステージ { $stage } の { $object }
selftest-stage-object-missing = ステージ { $stage } の { $object } がありません
selftest-stage-object-differs = { $object } が { $path } でステージ { $stage } と異なります
selftest-top-level = 最上位
selftest-fixture-unreadable = --fixture { $path } を読めません: { $reason }
command-succeeded = 成功しました
command-exited = 終了コード { $code } で終了しました
command-killed = シグナルで強制終了されました
command-timed-out = { $seconds } 秒以内に終わりませんでした
command-not-started = 起動できませんでした: { $reason }
demo-interrupted = { $command } を中断しました。シミュレーターは停止しました
demo-post-invalid = { $path } への POST を組み立てられません: { $reason }
demo-simulator-killed = 一時的なシミュレーターを強制終了しました: { $reason }
demo-simulator-not-stopped-pid = 一時的なシミュレーター（pid { $pid }）を停止できませんでした: { $reason }
demo-simulator-not-stopped = 一時的なシミュレーターを停止できませんでした: { $reason }

## class (src/class/**)
class-report-heading = クラスレポート: { $lab } — 受講者 { $learners } 人、合格 { $passed } 人
class-report-learner = 受講者
class-report-result = 結果
class-report-score = 得点
class-report-no-result = ジョブ { $job } のインデックス { $index } の結果はまだありません(実行中か失敗: Pod のログを参照)
class-report-bad-result = インデックス { $index } の結果はレポートではありません: { $reason }
class-board-watch-ended = { $server }: このクラスタの監視がすべて終了しました。再試行します
class-sim-already-up = 起動済み
class-sim-started = 起動しました
class-sim-restarted = 再起動しました
class-sim-untouched = -
class-failed = 失敗（下記）
class-lab-already-started = { $lab } は開始済み（受講者の作業をそのまま残します）
class-lab-started = { $lab } を開始しました
class-lab-found-started = { $lab } は開始済みでした（記録し、再適用しません）
class-lab-reset = { $lab } を開始時の状態に戻しました
class-lab-learner-down = { $lab } は開始していません：受講者のクラスターが停止しています
class-lab-failed = { $lab } 失敗（下記）
class-summary = { $failed ->
    [0] 受講者 { $learners } 人、すべて準備できました
   *[other] 受講者 { $learners } 人のうち { $failed } 人が失敗しました。ほかの受講者は準備できています。`lab-runner class up` で失敗した受講者をもう一度試せます
}
class-kubeconfigs = クラスの kubeconfig（受講者ごとに 1 コンテキスト）：{ $class }
    配布用：{ $learner }
class-down-kept = クラスを停止しました：受講者 { $learners } 人のうち { $running } 人が実行中でした（プロセス { $processes } 個）。状態は保持しています
class-down-purged = クラスを停止しました：受講者 { $learners } 人のうち { $running } 人が実行中でした（プロセス { $processes } 個）。状態を削除しました
class-status-learner = 受講者
class-status-state = 状態
class-status-endpoint = エンドポイント
class-status-lab = ラボ
class-status-score = 得点
class-status-no-lab = ラボなし
class-status-error = エラー：{ $reason }
class-status-lab-pending = { $lab }（未開始）
class-status-lab-failed = { $lab }（開始に失敗）
class-board-learner-stopped = { $learner } は停止しています。`lab-runner class up` で再び起動できます
class-board-learner-gone = { $learner } のシミュレーター（pid { $pid }）が終了しています。`lab-runner class restart { $learner }` で作業を残したまま再起動できます

## Where the class is stuck (class report), and a learner's timeline (class report --learner)
stuck-heading = クラスがつまずいている所: { $lab } — 受講者 { $learners } 人、クラスのタイムラインから
stuck-task = タスク
stuck-passed = 合格
stuck-median = 合格までの中央値
stuck-slowest = 最も遅い
stuck-wrong-answers = 誤答
stuck-hints = ヒント
stuck-hints-cell = { $shown }（受講者 { $learners } 人）
stuck-not-passing = { $task }: まだ合格していません: { $learners }
stuck-evidence = { $task }: 失敗 { $count } 回: { $evidence }
stuck-wrong = { $task }: 誤答 { $count } 回: { $value }
stuck-no-timeline = クラスのタイムラインがありません（{ $path }）: まだ何も記録されていないか、`class up --record none` です
timeline-heading = { $lab } での { $learner } のタイムライン: { $events } 件
timeline-value-concealed = [解答]
timeline-answer-right = { $value } と解答しました（試行 { $attempt }）: 正解
timeline-answer-wrong = { $value } と解答しました（試行 { $attempt }）: 不正解
timeline-hint = ヒント { $level } を表示しました
timeline-start = ラボを開始しました
timeline-reset = ラボを開始時の状態に戻しました
timeline-restart = シミュレーターを再起動しました
