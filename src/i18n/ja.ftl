# lab-runner の表示文（日本語）。en.ftl と同じ id と同じプレースホルダーを持つ
# （src/i18n/mod.rs のテストが確かめる）。コマンドと Kubernetes 自身のメッセージは
# バッククォートか引用符で示し、判定コード（PASS、FAIL、BLOCKED、ERROR）と列名は訳さない。

## check のレポート (src/report/mod.rs)
report-hint = ヒント { $tier }: { $text }
report-score = 得点 { $score }/{ $total }
report-variant = バリアント { $variant }
report-stuck = 行き詰まったら: lab-runner check { $lab } --hint 1

## check --watch (src/report/live.rs, src/commands/check.rs)
watch-summary = { $open ->
    [0] 得点 { $score }/{ $total } — すべてのタスクが合格
   *[other] 得点 { $score }/{ $total } — 残り { $open } タスク
}
watch-watching = { $context } の { $lab } を監視中（Ctrl-C で停止）
watch-listing = 一覧を取得中… { $watching }
watch-reconnecting = { $feed } を再接続中: 「{ $reason }」
watch-reconnecting-note = 注意: { $feed } の監視を再接続中です（「{ $reason }」）。最後に見えたオブジェクトを使います
watch-ended-all-pass = すべてのタスクが合格したため監視を終了しました（{ $duration }、{ $evaluations }）
watch-ended-stopped = 監視を停止しました（{ $duration }、{ $evaluations }）
watch-ended-timed-out = { $timeout }でタイムアウトしたため監視を終了しました（{ $evaluations }）
watch-ended-regressed = { $ended }。後退したタスク: { $tasks }
watch-evaluations = 評価 { $count } 回

## check の根拠の枠 (src/engine/check.rs)
check-needs = 先に { $task } が必要（{ $status }）
check-not-graded = 未採点
check-held-both = { $apart } 間隔の 2 回の観測のどちらでも成立
check-observation-first = 観測 1/2（開始時）
check-observation-second = 観測 2/2（{ $apart } 後）
check-no-answer = まだ回答がありません: lab-runner answer { $lab } { $task } { $word }
check-no-answer-choices = まだ回答がありません: lab-runner answer { $lab } { $task } { $word }（{ $word }は { $values } のいずれか）
check-answer-placeholder = 値

check-stage-missing = ラボ { $lab } のステージ { $stage } が適用されていません（`reset --to-stage` がその手前で止まりました）。どのタスクも採点できません。`lab-runner reset { $lab }` ですべてのステージを適用し直せます
check-reveal-needs-key = `check { $lab } --reveal` はインストラクター用です。この資格情報ではラボの鍵を読めません。--reveal が表示する内容はクイズの答えになります
check-answer-right = 回答 "{ $answer }" は正解です
check-answer-wrong = 回答 "{ $answer }" は正しくありません
check-attempts-locked = 回答は { $limit } 回までです。これ以上は回答できません
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
status-desired = Pod を動かすべきノード数（セレクター、アフィニティ、taint による）
status-current = そのうち Pod があるノード数
status-ready = Pod が Ready のノード数
status-up-to-date = Pod が現在のテンプレートで動いているノード数
status-available = Pod が minReadySeconds の間 Ready を保っているノード数
status-misscheduled = 動かすべきでないノード上の Pod 数
status-unavailable = DESIRED − AVAILABLE。この数が maxUnavailable に達するとロールアウトが止まります
status-no-pod = Pod なし
status-no-pod-expected = Pod なし（ラボはこのノードに Pod を期待していますが、DaemonSet の対象外です）
status-gpu-nodes = GPU ノード（設定はラベル { $label } で選択）
status-no-gpu-nodes = 該当するノードはありません
status-quotas = チームのクォータ
status-no-quota = ResourceQuota がありません
status-not-started = ラボ { $lab } はこのクラスターでまだ開始されていません。`lab-runner start { $lab }` で開始します
status-instructor = ラボ { $lab }: { $variant }、完了したステージ: { $stages }、開始時に記録した値: { $facts }（ハッシュで保存）
status-variant = バリアント { $variant }
status-variant-none = バリアントなし
status-needs-target = status にはラボか --daemonset NAMESPACE/NAME を指定してください
status-bad-daemonset = --daemonset には NAMESPACE/NAME を指定してください（指定された値: "{ $given }"）

## reset の計画と実行結果 (src/engine/reset_plan.rs, src/engine/reset.rs, src/commands/reset.rs)
reset-delete-created-by-lab = { $object } を削除（ラボが作成）
reset-delete-created-by-learner = { $object } を削除（開始後に受講者が作成）
reset-part-labels = ラベル
reset-part-annotations = アノテーション
reset-restore = { $object } の { $parts } を復元（開始前から存在）
reset-keep-existed = { $object } を保持（開始前から存在）
reset-keep-holds-foreign = { $object } を保持（ラボのものではないオブジェクトが残っています: { $held }）
reset-more = ほか { $count } 個
reset-keep-owned = { $object } を保持（ラボ { $lab } が所有）
reset-keep-learner-object = { $object } を保持（受講者が作成。このラボは受講者のオブジェクトを残す）
reset-hand-over = { $object } をラボ { $lab } に引き継ぐ（まだ使用中）
reset-restore-node = ノード { $node } を最初の開始時の状態に復元: { $parts }
reset-node-labels = ラベル（{ $changes }）
reset-node-resources = 公開リソース（{ $changes }）
reset-label-removed = { $key } を削除
reset-restore-node-labels = ノード { $node } のラベルを復元（{ $changes }）
reset-restore-configmap = ConfigMap { $namespace }/{ $name } を記録したデータに復元
reset-delete-configmap-new = ConfigMap { $namespace }/{ $name } を削除（ラボの開始前には存在しませんでした）
reset-apply-stage = ステージ { $stage } を再適用
reset-delete-inventory = ConfigMap { $namespace }/{ $name } を削除（インベントリです。ラボは開始前の状態に戻ります）
reset-delete-inventory-and-namespace = ConfigMap { $namespace }/{ $name } を削除（インベントリです。ラボは開始前の状態に戻ります）し、Namespace { $namespace } も削除（ほかに何もありません）
reset-kept-changed-hands = { $object } を保持（計画を立てた後で持ち主が変わりました）
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
start-timed-out-reset = { $seen }。ラボの開始後にクラスターが変更された可能性があります。`lab-runner reset { $lab }` で、きれいな状態から開始し直せます
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
start-collision = start { $lab } は何も変更せずに中止しました: { $objects } はすでに存在し、このラボが作成したものではありません（{ $count } 件）。削除するか名前を変えるか、別のクラスターを使ってください。引き継ぐつもりなら、ラボのステージの `adopt:` に宣言してください
answer-no-task = ラボ { $lab } にタスク "{ $task }" はありません
answer-not-a-quiz = タスク { $task } はクイズではありません。`check` がクラスターから採点します
answer-not-started = ラボ { $lab } はこのクラスターで開始されていません。先に `lab-runner start { $lab }` を実行してください
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
error-kubeconfig = kubeconfig { $path } を使えません: { $reason }（`lab-runner sim up` でシミュレーションのクラスターを起動すると kubeconfig が書き出されます。別のファイルは --kubeconfig FILE で指定します）
error-unknown-context = kubeconfig { $path } にコンテキスト "{ $context }" はありません。利用できるコンテキスト: { $known }
error-unreachable = { $server } のクラスター（コンテキスト { $context }）に接続できません: { $reason }。クラスターは動いていますか？（`lab-runner sim up` でシミュレーションのクラスターを起動できます）
error-variant-change = ラボ { $lab } は別のバリアントで開始されていて、その故障が適用済みです。別のバリアントで開始するとそれを置き換え、回答は消えます。続けるには --yes を付けてください（または先に `lab-runner reset { $lab }`）
error-unknown-lab = "{ $id }" という名前のラボはありません。利用できるラボ: { $known }
error-unknown-built-in-lab = "{ $id }" という名前のラボは組み込まれていません（組み込みのラボ: { $known }）。ディレクトリにあるラボは `--labs DIR` か `LAB_RUNNER_LABS=DIR` で読み込みます
error-invalid-bundle = ラボのバンドル { $bundle } に { $count } 件の問題があります
error-invalid-course = コースファイル { $file } に { $count } 件の問題があります
error-not-a-bundle = { $path }: ラボのバンドルではありません（lab.yaml がありません）

## Issue #19: 採点の根拠、ローダーと lint の問題、エンジンのエラー、selftest の記録、デモ
## (src/grade/**, src/lab/loader/**, src/engine/**, src/commands/demo.rs)。
## Kubernetes 自身のメッセージはバッククォート、ライブラリのメッセージは「」で引用する。

## 採点: マッチャー (src/grade/mod.rs, observed.rs, partial.rs, path.rs)
grade-no-expectations = このタスクには判定する項目がありません
grade-listing-failed = { $kind } を一覧できませんでした: 「{ $reason }」
grade-unreadable = { $object } は一覧に含まれていますが読み取れません（{ $reason }）。この確認の対象かもしれないため判定できません
grade-not-observed = { $kind } を観測できませんでした
grade-cannot-judge = { $reason }。{ $target } を判定できません
grade-none-exists = { $target } は存在しません
grade-does-not-exist = { $object } は存在しません
grade-object-matches = { $object }: 期待どおり
grade-object-detail = { $object }: { $detail }
grade-exists-expected-none = { $object } が存在します（存在しないはずです）
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
grade-error-non-string-label = { $path } が文字列ではありません。ラベル、アノテーション、ノードセレクターの値は文字列です（引用符で囲んでください）
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
partial-not-a-map = { $path } は { $found }（マップのはずです）
partial-differs = { $path } は { $found }（期待値 { $expected }）
partial-not-a-list = { $path } は { $found }（リストのはずです）
partial-no-element = { $path } に { $item } と一致する要素がありません（最も近い要素: { $closest }）
partial-no-element-empty = { $path } に { $item } と一致する要素がありません（リストが空です）
partial-length = { $path } の要素は { $found } 個（期待はちょうど { $expected } 個）
partial-each-empty = { $path } が空か存在しません（すべての要素が一致するはずです）
partial-none-expected = { $path } が { $item } に一致します（一致する要素はないはずです）
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
grade-rollout-no-pod = ノード { $node }: Pod なし
grade-rollout-pod = ノード { $node }: Pod { $pod }、リビジョン { $revision }、イメージ { $image }、{ $state }
grade-rollout-unwanted-pod = ノード { $node }: DaemonSet がもう求めていないノードで Pod { $pod } が動いています
grade-rollout-old-revision = ノード { $node }: まだ旧リビジョン { $revision } のままです（{ $state }）
grade-rollout-new-pod = ノード { $node }: 新しい Pod { $pod } は { $state }
grade-rollout-unavailable = numberUnavailable が { $unavailable }
grade-rollout-desired-at-start = DESIRED は { $desired } ですが、開始時にラボのノードセレクターに一致したノードは { $nodes } 個です
grade-rollout-still-broken = テンプレートがまだ壊れたときのままです
grade-rollout-template-untolerated = テンプレートがノード { $node } の taint { $taint } を許容しないため、DaemonSet はそこで動きません
grade-rollout-template-not-selecting = テンプレートの nodeSelector・アフィニティ・nodeName がノード { $node } を対象外にしています
grade-rollout-template-too-big = テンプレートの要求がノード { $node } の持つ量を超えています（{ $reasons }）
grade-rollout-template-unreadable = テンプレートの要求量を読めません: { $reason }
grade-rollout-pod-not-template = ノード { $node }: Pod { $pod } は { $found } を動かしており、テンプレートの { $expected } ではありません。その場で書き換えたものなので数えません
grade-rollout-no-start-nodes = このチェックが対象とするノードは開始時に記録されますが、ラボの記録にありません（ここでラボが開始されていないか、記録が削除されました）。今ラベルの付いているノードで代わりに判定するのは正確ではありません。インストラクターが `lab-runner reset` でラボを開始し直してください
grade-quiz-needs-key = 正解はラボの鍵で封印されていて、この資格情報ではその鍵を読めません。このクイズはインストラクターの資格情報で採点されます（クラスのホストでの `lab-runner check`、またはクラスのボード）
records-tampered = ラボ { $lab } の記録が lab-runner 以外によって変更または削除されました（{ $records }）。このまま採点するのは正確ではありません。インストラクターが `lab-runner reset { $lab }` でラボを開始し直してください
records-need-key = ラボの記録を書き込むにはその鍵（Secret { $secret }）が必要ですが、この資格情報では読めません。インストラクターの資格情報で実行してください
action-record-answer = { $task } への回答の記録
action-read-key = 記録の鍵 { $object } の読み取り
action-write-key = 記録の鍵 { $object } の書き込み
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
grade-pod-not-running = { $object } は Running かつ Ready ではありません（{ $phase }）
grade-pod-node-missing = { $object } は存在しないノード { $node } に割り当てられています
grade-pod-on-other-node = { $object } はノード { $node } で動いていますが、そのノードはタスクが求めるノードではありません
grade-pod-runs-held = { $object } はノード { $node } で動いており、そのノードは要求されたものを公開し、収容できます
grade-pod-node-cannot-hold = { $object } はノード { $node } で動いていますが、そのノードは要求されたものを公開していないか収容できません（{ $reasons }）。スケジューラーを通さずに割り当てられたもので、kubelet なら受け入れません
grade-quota-hard-not-a-quantity = hard の値 { $value } は数量ではありません
grade-quota-hard-is = ResourceQuota { $quota }: hard の { $resource } は { $hard }
grade-quota-hard-differs = ResourceQuota { $quota }: hard の { $resource } は { $found }（期待値 { $expected }）
grade-quota-hard-missing = ResourceQuota { $quota } には hard の { $resource } がありません（利用できるキー: { $keys }）
grade-quota-scope-exempts = ResourceQuota { $quota } はスコープ { $scopes } の Pod しか対象にしません。チームのワークロードのような Pod（プローブと同じ QoS クラス { $qos }）には適用されません
grade-quota-none = 名前空間 { $namespace } に ResourceQuota がありません
grade-not-started = このクラスターではラボが開始されていません（インベントリがありません）
grade-fact-not-captured = start が値 { $fact } を記録していません。`lab-runner start` をもう一度実行してください
grade-quiz-unjudgeable = このクイズには、開始時に記録した値も正解の候補もありません
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
grade-pod-file-fits-expected-none = { $file } はノード { $nodes } に配置できます（どのノードにも配置できないはずです）
grade-plugin-no-node = チェックのノードセレクターに一致するノードがありません
grade-plugin-no-label = ノード { $node }: ラベル { $label } がありません
grade-plugin-not-a-key = ノード { $node }: { $label }={ $config } は ConfigMap { $configmap } のキーにありません（利用できるキー: { $keys }）
grade-plugin-other-config = ノード { $node }: { $label }={ $config }（期待値 { $expected }）
grade-plugin-unparsable = ノード { $node }: 設定 { $config } を読めません: 「{ $reason }」
grade-plugin-mig-allocatable = ノード { $node }: allocatable の { $resource } は { $found }（GFD ラベルからは { $expected }）
grade-plugin-mig-in-effect = ノード { $node }: 設定 { $config } が有効（MIG mixed、{ $advertised }）
grade-plugin-no-gpu-count = ノード { $node }: まだ nvidia.com/gpu.count ラベルがありません（GFD がノードにラベルを付けていません）
grade-plugin-replicas = ノード { $node }: nvidia.com/gpu.replicas は { $found }（設定 { $config } では { $expected }）
grade-plugin-strategy = ノード { $node }: nvidia.com/gpu.sharing-strategy は { $found }（設定 { $config } では { $expected }）
grade-plugin-allocatable = ノード { $node }: allocatable の { $resource } は { $found }（設定 { $config } では GPU { $gpus } 個 × { $replicas } = { $expected }）
grade-plugin-in-effect = ノード { $node }: 設定 { $config } が有効（{ $strategy }、{ $resource } { $advertised }）

## 採点: アラートルール (src/grade/alert.rs)
alert-does-not-parse = 解析できません: 「{ $reason }」
alert-unsupported = { $construct } を使っていますが、エンジンの評価器はこれに対応していません
alert-construct-offset = offset または @
alert-construct-or-in-selector = セレクター内の `or`
alert-construct-aggregation-parameter = パラメーター付きの集約 { $op }
alert-construct-aggregation-scalar = スカラーに対する { $op }
alert-construct-aggregation = 集約 { $op }
alert-construct-vector-of-vector = ベクトルに対する vector()
alert-construct-function = 関数 { $name }()
alert-construct-range-selector = 範囲セレクター
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
alert-fires-on-incidentals = { $object }: アラート { $alert } は、{ $breakages }ときに常に発火するわけではありません。確認した状態のうち、ロールアウトとは関係のない値（世代、経過時間、Pod 名、ターゲットのラベル）だけが異なる状態の一部でしか発火しません
alert-rule-not-the-learners = { $object } はラボの開始前からあったため、採点の対象外です
alert-no-rule = { $target } にアラートルールがありません

## ローダーの問題 (src/lab/loader/**)
loader-yaml-error = YAML を読めません: 「{ $reason }」
loader-yaml-error-at = { $path }: YAML を読めません: 「{ $reason }」
loader-yaml-field-at = { $path }: { $problem }
loader-yaml-unknown-field = フィールド `{ $field }` はありません（使えるフィールド: { $expected }）
loader-yaml-missing-field = 必須のフィールド `{ $field }` がありません
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
loader-course-no-bundle = コースにあるラボ { $lab } にはバンドルがありません（利用できるラボ: { $labs }）
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
loader-duplicate-shortcut = タスク { $task } のショートカットまたは解き方の id { $id }
loader-shortcut-no-commands = タスク { $task } のショートカットまたは解き方 { $shortcut } にコマンドがありません
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
loader-label-this-fact = この記録する値
loader-duplicate-fact = 記録する値の id { $id }
loader-fact-id-invalid = 記録する値の id { $id } には英小文字、数字、'-' だけを使い、`variant` 以外にしてください
loader-fact-source = 記録する値 { $id } には `path` と `expression` のどちらか一方だけを指定してください
loader-fact-path-needs-name = 記録する値 { $id } は 1 つのオブジェクトの `path` を読みます。`from` に `name` を指定してください
loader-quiz-unknown-fact = クイズ { $task } が比べる値 { $fact } を記録するステージがありません（記録する値: { $known }）
loader-quiz-unknown-fact-help = 記録する値は `variant`、`affectedNode`、ステージの `facts:` にある id です
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
loader-running-needs-pods = `want: running` は既存の Pod を判定します。`podFile` ではなく `pods` を指定してください
loader-schedulable-source = `pods` と `podFile` のどちらか一方だけを指定してください
loader-broken-stage-unknown = brokenStage { $stage } はラボのステージではありません
loader-quiz-nothing-accepted = `fact`、`accept`、`acceptByVariant` のいずれかを指定してください
loader-quiz-unknown-variant = acceptByVariant に不明なバリアント { $variant } があります
loader-quiz-not-a-choice = 正解 { $value } が `choices` にありません
loader-quiz-no-attempts = `attempts` は 1 以上にしてください
loader-quiz-placeholder = { $lang } の説明文の `lab-runner answer` には { $word } とあり、クイズの `placeholder` と一致しません。まだ回答していない受講者には `check` が placeholder を入力するよう案内します
loader-cel-no-target = `target`（`object` として束縛）か `targets`（それぞれの名前で束縛）を指定してください
loader-cel-target-name = ターゲット名 { $name } は CEL の識別子（英字、数字、`_`）にし、`object`、`answers`、`fact`、予約語、型名以外にしてください
loader-cel-error = CEL 式をコンパイルできません: { $error }
loader-cel-error-help = 式で使える変数: { $variables }
loader-wait-problem = ステージ { $stage } の { $target } の待機: { $problem }
loader-fact-problem = 記録する値 { $id }: { $problem }

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
lint-no-hints-help = ヒントは段階的に書いてください: きっかけ、手がかり、そしてコマンド
lint-no-solution = タスク { $task } に模範解答がありません
lint-no-solution-help = `selftest` は各タスクの `solution` のコマンドを実行して、タスクが合格できることを確かめます
lint-label-passes-empty = 空のクラスターで合格します
lint-vacuous = タスク { $task } は空のクラスターで合格してしまいます（{ $evidence }）
lint-vacuous-help = 受講者の作業があって初めて成り立つ期待を追加してください（`match` や `count >= 1` など）
lint-no-shortcuts = タスク { $task } にショートカットが宣言されていません
lint-no-shortcuts-help = 受講者がタスクをせずに PASS を得ようとする試みを `shortcuts:` に挙げてください。`selftest` がどれも合格しないことを確かめます

## エンジンのエラー (src/engine/**)
error-no-current-context = コンテキストの指定がなく、current-context も設定されていません
error-no-answer = { $seconds } 秒以内に応答がありません
error-api = { $action }に失敗しました: { $reason }
error-preflight = クラスターがラボ { $lab } の条件を満たしていません: { $reason }
error-timed-out = { $what }を { $seconds } 秒待ちましたが、タイムアウトしました: { $seen }
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
answer-not-a-node = { $value } はこのクラスターのノードではありません（`kubectl get nodes` を参照）。回答は記録されていません
answer-not-a-choice = { $value } は { $task } の選択肢（{ $choices }）のいずれでもありません。回答は記録されていません
answer-busy = { $task }: 回答を記録する間にラボの記録が変わり続けました。回答は記録されていません。もう一度試してください
answer-locked = { $task } はロックされています（{ $limit } 回の回答をすべて使いました）。回答は記録されていません
class-kubeconfig-unreadable = kubeconfig { $path } を読めません: { $reason }
class-kubeconfig-no-learner = { $path } に受講者のコンテキストがありません（閲覧用のコンテキストだけか、何もありません）
class-kubeconfig-dangling-cluster = { $path }: コンテキスト { $context } が、ファイルに定義されていないクラスターを指しています
class-kubeconfig-dangling-user = { $path }: コンテキスト { $context } が、ファイルに定義されていないユーザーを指しています
class-kubeconfig-name-count = kubeconfig { $inputs } 個に対して --name が { $names } 回指定されました。kubeconfig ごとに順に 1 回ずつ指定してください
preflight-nodes = { $selector } に一致するノードが少なくとも { $min } 個必要です（{ $description }）が、{ $total } 個中 { $found } 個でした。ノードにラベルを付けるか、`lab-runner sim up` で組み込みのシミュレーターを起動してください
preflight-nodes-advertising = { $resources } を公開し { $selector } に一致するノードが少なくとも { $min } 個必要です（{ $description }）が、{ $total } 個中 { $found } 個でした。ノードにラベルを付けるか、`lab-runner sim up` で組み込みのシミュレーターを起動してください
preflight-denied = このユーザーには { $denied } の権限がありません。`start` には cluster-admin 権限のある kubeconfig のコンテキストを使ってください（`kubectl auth can-i patch daemonsets -n NAMESPACE` で確認できます）
preflight-denied-cluster = { $resource } の patch
preflight-denied-in = 名前空間 { $namespace } での { $resource } の patch
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
start-fact-unreadable = 記録する値 { $fact } を読み取れません: { $reason }
start-fact-not-one = { $target } が選ぶオブジェクトは { $count } 個です。記録する値のパスはちょうど 1 個のオブジェクトから読みます
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
selftest-step-alternative = 別の解き方 { $task }/{ $solution }
selftest-step-other-order = 別の順序: { $task }（{ $solution }）
selftest-step-reset-other-order = 別の順序のためのリセット
selftest-step-facts = リセット後の記録した値
selftest-step-reset-end = 最後のリセット
selftest-facts-fresh = 開始時に記録した値で採点する { $count } 個のクイズが、模範解答で正解になります
selftest-fact-stale = リセット後、クイズ { $task } が模範解答で { $status } です。値が記録し直されていません{ $evidence }
selftest-after-reset-not-as-started = タスク { $task } がリセット後に { $status } です。開始時は { $start } でした{ $evidence }
selftest-alternative-failed = タスク { $task } の解き方 { $solution } を実行できませんでした: { $reason }
selftest-alternative-not-passing = タスク { $task } が解き方 { $solution } の後に { $status } です。これも合格する必要があります{ $evidence }
selftest-step-solution = 模範解答 { $task }
selftest-step-reset-after = 模範解答の後のリセット
selftest-step-check-after = リセット後のチェック
selftest-step-owned = リセット後のラボのオブジェクト
selftest-reset-done = { $count } ステップ
selftest-started = { $count } 個のオブジェクトを適用
selftest-started-variant = バリアント { $variant }、{ $count } 個のオブジェクトを適用
selftest-shortcuts-skipped = スキップ: このクラスターはチェックポイントを持たず、ショートカット（ノードの削除や cordon）を元に戻せません。{ $count } 個のショートカットはシミュレーターで実行されます
selftest-restored = 元に戻しました
selftest-no-solution = タスク { $task } に模範解答がありません
selftest-solution-failed = タスク { $task } の模範解答が失敗しました: { $reason }
selftest-command-failed = `{ $command }` が{ $exit }{ $stderr }
selftest-shortcut-failed = タスク { $task } のショートカット { $shortcut } を実行できませんでした: { $reason }
selftest-shortcut-passes = タスク { $task } がショートカット { $shortcut }（{ $description }）の後に合格します{ $evidence }
selftest-task-status = { $task } { $status }{ $evidence }
selftest-task-missing = タスク { $task } がレポートにありません
selftest-evidence = （{ $line }）
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
selftest-fact-node-resource = ノード { $node } の { $key }={ $value }
selftest-fact-node-label = ノード { $node } のラベル { $key }={ $value }
selftest-fact-configmap = ConfigMap { $object } のデータ { $data }
selftest-fact-configmap-absent = ConfigMap { $object } なし
selftest-left-after-reset = リセット後も残っています: { $fact }
selftest-missing-after-reset = リセット後に失われました: { $fact }
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
class-report-no-result = ジョブ { $job } のインデックス { $index } の結果はまだありません（実行中か、失敗しました。Pod のログを確認してください）
class-report-bad-result = インデックス { $index } の結果はレポートではありません: { $reason }
class-board-watch-ended = { $server }: このクラスターの監視がすべて終了しました。再試行します
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

## Issue #32: ヘルプ (src/cli/help.rs)。コマンドの説明は help-<パス>（lab-runner 自身は help）、
## 詳しい説明は help-<パス>-long、フラグの説明は help-<パス>--<フラグ>。コマンドから lab-runner に
## 向かって探す（help-sim--state-dir はすべての sim コマンドで使われる）。
help = Kubernetes の GPU 共有コースのハンズオンラボを実行し、採点します。シミュレーションの GPU クラスターを内蔵しています
help--kubeconfig = kubeconfig ファイルのパス（既定は $KUBECONFIG、なければ ~/.kube/config）
help--context = 使う kubeconfig のコンテキスト（既定は現在のコンテキスト）
help--verbose = 詳しく表示します。重ねるとさらに詳しくなります（-vv）
help--lang = 表示する言語（既定は LANG から決めます。ja で始まれば ja）
help--labs = 組み込みのラボの代わりに、このディレクトリからラボのバンドルを読み込みます
help--lab = ラボの id（`lab-runner labs list` で確認できます）
help-start = ラボのステージを適用し、クラスターがラボの開始状態になるまで待ちます
help-start--variant = 開始するラボのバリアント（既定は --seed から選びます）
help-start--seed = 既定のバリアントを再現できるように選ぶためのシード
help-start--reveal = 開始したバリアントを表示します（講師向け。クイズの答えになるため、受講者には表示しません）
help-start--yes = 故障を適用済みの別のバリアントを、確認せずに置き換えます
help-check = 受講者の作業を採点します。タスクごとに PASS、FAIL、BLOCKED、ERROR を根拠とヒントとともに表示します
help-check--format = レポートの形式: human（端末向けの色付きテキスト）、json（バージョン付きの JSON。docs/report-format.md を参照）、junit（CI 向けの JUnit XML）
help-check--hint = この段階までのヒントを表示します（1 = きっかけ、2 = 手がかり、3 = コマンド）
help-check--reveal = 講師向け: 不合格のタスクの模範解答と、開始したバリアントも表示します
help-check--details = すべてのタスクの説明を表示します（不合格のタスクの説明は常に表示します）
help-check--confirm = この間隔をあけて 2 回観測し、両方で成り立ったものだけを合格にします（例: 30s）
help-check--watch = 変化のたびに評価し直し、チェックリストを表示し続けます。すべてのタスクが合格する（または Ctrl-C か --timeout）と終了します
help-check--timeout = --watch と一緒に使います: この時間（例: 10m）で止め、すべてのタスクが合格していなければ終了コード 4 で終了します
help-check--contexts = これらの kubeconfig のコンテキスト（クラス）を採点します。`all` はすべてのコンテキストです
help-answer = クイズのタスクの回答をクラスターに記録します
help-answer--task = クイズのタスクの id
help-answer--value = 回答
help-reset = クラスターをラボの開始状態に戻します（講師向け）
help-reset--to-stage = 既定のすべてのステージの後ではなく、このステージの後の状態に戻します
help-reset--variant = 今のバリアントではなく、このバリアントでラボを開始し直します（インストラクター向け）
help-reset--seed = 開始し直すバリアントをこのシードから選びます（`start --seed` と同じです）
help-reset--remove = ラボをクラスターから取り除きます。ラボと受講者が作成したものを削除し、変更前の状態をすべて復元し、インベントリを削除します（最初の `start` の前のクラスターに戻ります）
help-reset--dry-run = 計画を表示するだけで、何も変更しません
help-reset--yes = 削除する前に確認しません
help-status = 受講者が見るものを表示します: ロールアウト、GPU ノードの設定、チームのクォータ
help-status--lab = ラボの id（--daemonset を使うときは省略します）
help-status--daemonset = 任意の DaemonSet を NAMESPACE/NAME で指定して表示します
help-status--reveal = 講師向け: バリアントと、開始時に記録した値も表示します（ほかでは表示しません）
help-selftest = すべてのチェックが模範解答の前には不合格で、後には合格することを確かめます
help-selftest-long = すべてのチェックが模範解答の前には不合格で、後には合格することを確かめます。
    
    --kubeconfig か --context でクラスターを指定しない限り、新しい組み込みのシミュレーターで実行します（$KUBECONFIG だけでは指定したことになりません。selftest はラボをリセットし、その名前空間を削除するためです）。
help-selftest--variant = テストするバリアント、または `all`（既定はすべてのバリアント）
help-selftest--speed = 新しいシミュレーターの遅延を、この倍率で速く進めます
help-selftest--fixture = selftest の前に、このディレクトリのマニフェストを適用します（例: すでに何かが動いているクラスターを表す manifests/clusters/brownfield）。プラットフォームチームが用意した状態を再現します
help-demo = 新しい組み込みのシミュレーターでラボを最初から最後まで実行します: start、status、模範解答、check
help-demo--variant = 実行するバリアント
help-lint = ラボのバンドルを検証します: スキーマ、参照、ヒント、テキスト、空のクラスターで合格するタスクがないこと
help-lint--paths = ラボのバンドルのディレクトリか lab.yaml ファイル（既定は組み込みのすべてのラボ）
help-labs = 利用できるラボを一覧または表示します
help-labs-list = ラボを一覧します: id、タイトル、タスク、点数
help-labs-show = ラボを 1 つ表示します: 説明、ステージ、タスク
help-labs-show--variant = 講師向け: このバリアントが壊すもの、受け付けるクイズの正解、selftest が合格しないことを確かめるショートカットも表示します（ほかでは表示しません）
help-labs-show--reveal = 講師向け: クイズの正解（バリアントのあるラボではすべてのバリアントの正解）と、selftest が合格しないことを確かめるショートカットも表示します（ほかでは表示しません）
help-sim = 組み込みのシミュレーションの GPU クラスター
help-sim--state-dir = 状態ディレクトリ: ストア、証明書、kubeconfig、pid ファイル
help-sim--topology = クラスターのトポロジーファイル（既定は組み込みのラボのトポロジー）
help-sim--nodes = 代わりに、この数のワーカーノードを持つトポロジーを生成します
help-sim--port = 127.0.0.1 のポート（既定は空いている任意のポート）
help-sim--listen = 待ち受けるアドレス。`IP:PORT` か `IP`（空いている任意のポート）で、コンテナーでは `0.0.0.0:6443` などです（既定は 127.0.0.1）。TLS とトークンは有効のままです
help-sim--tls-san = サーバー証明書に 127.0.0.1 と localhost のほかに載せる名前（DNS 名か IP アドレス）。繰り返し指定できます
help-sim--speed = シミュレーションの遅延を、この倍率で速く進めます
help-sim--api-only = API だけを提供します。スケジューラー、kubelet、コントローラーは書き込まれたものを調整しません（kube-apiserver だけのように動きます）
help-sim-up = シミュレーターをバックグラウンドで起動し、kubeconfig を書き出します
help-sim-down = バックグラウンドのシミュレーターを停止します
help-sim-status = バックグラウンドのシミュレーターを表示します: pid、エンドポイント、稼働時間、オブジェクト数
help-sim-serve = シミュレーターをフォアグラウンドで実行します
help-sim-kubeconfig = シミュレーターの管理者用 kubeconfig を表示します（公開したコンテナーのポートには `docker exec CONTAINER lab-runner sim kubeconfig --server https://127.0.0.1:PORT` などとします）
help-sim-kubeconfig--server = 書き込むサーバーの URL（既定は実行中のシミュレーターのエンドポイント）
help-class = クラス: このホストで多数の受講者用シミュレーターを動かし、受講者ごとのコンテキストを 1 つの kubeconfig にまとめます。受講者自身の kubeconfig を 1 つにまとめることもできます
help-class--state-dir = クラスのディレクトリ: class.json、kubeconfig、learner-01/ …（既定は $XDG_STATE_HOME/lab-runner/class）
help-class--tls-san = 受講者の証明書に載せる別の名前。繰り返し指定できます
help-class-up = 受講者用のシミュレーター N 個（それぞれ 1 プロセス）のクラスを作るか、記録したクラスを元に戻します: 停止しているものを同じポートで起動し、ラボをまだ開始していない受講者で開始します（開始済みの受講者ではもう開始しません）。DIR/kubeconfig（受講者ごとのコンテキスト）と DIR/learner-NN/kubeconfig を書き出します
help-class-up--learners = 受講者の人数（1 から 100）。クラスを作るときに必要です。今より多ければ受講者を追加します
help-class-up--lab = すべての受講者のクラスターで開始するラボ
help-class-up--variant = すべての受講者に割り当てるバリアント
help-class-up--seed = 受講者のバリアントを決めるシード: 受講者 1 には `start --seed S` が選ぶもの、次の受講者には次のバリアントを割り当てます
help-class-up--listen = 受講者が待ち受けるアドレス。`IP`（それぞれ空いている任意のポート）か `IP:PORT`（受講者 N は PORT+N-1）です（既定は 127.0.0.1）
help-class-up--processes = 受講者ごとに 1 つのシミュレーターのプロセス（per-learner、新しいクラスの既定）か、全員で 1 つのプロセス（shared）
help-class-start = ラボをまだ開始していないすべての受講者で LAB を開始し、それをクラスのラボにします（--lab なしで作ったクラスや、コースの次のラボ）
help-class-start--lab = ラボ
help-class-start--variant = すべての受講者に割り当てるバリアント
help-class-start--seed = 受講者のバリアントを決めるシード（既定はクラスのシード）
help-class-restart = これらの受講者のシミュレーターを同じポートで停止して起動し直します。作業は残ります
help-class-restart--learners = 受講者（learner-03 …）、または `all`
help-class-reset = これらの受講者のクラスターで、クラスのラボを開始した直後の状態に戻します
help-class-reset--learners = 受講者（learner-03 …）、または `all`
help-class-status = すべての受講者を表示します: 稼働中か停止中か、エンドポイント、ラボ、得点
help-class-down = すべての受講者を一度に停止します（--purge を付けない限り状態は残します）
help-class-down--purge = 受講者の状態、kubeconfig、クラスの記録も削除します
help-class-board = 講師用のライブページを提供します: 受講者 × タスクの表で、受講者の作業に合わせて更新されます
help-class-board--state-dir = クラスのディレクトリ: クラスのすべての受講者をそのラボで採点します（既定は $XDG_STATE_HOME/lab-runner/class。--contexts を指定したときは使いません）
help-class-board--contexts = クラスのディレクトリの代わりに、--kubeconfig のこれらのコンテキストを採点します。`all` はすべてのコンテキストです
help-class-board--lab = 採点するラボ（既定はクラスのラボ）
help-class-board--listen = ページを提供するアドレス
help-class-board--retry = クラスターに接続できない受講者を再試行するまでの時間（接続できる受講者は、監視によって変化のたびに採点し直します）
help-class-board--stalled-after = 終わっておらず、判定がこの時間変わらない受講者に印を付けます
help-class-board--token = すべてのリクエストに必要なトークン（`generate` なら無作為に作り、開始時の URL に表示します）。ループバック以外のアドレスでは必須です
help-class-board--reveal = クイズの正解、バリアント、模範解答をボードに表示します（そのときは投影しないでください）
help-class-board--memory = 受講者ごとの「変化なし」の時計をボードの再起動をまたいで保存するファイル（既定はクラスのディレクトリの board.json。--contexts では保存しません）
help-class-report = クラスのレポートを 1 つ作ります（`check --contexts all --format json` と同じ形）: 今採点したクラスの受講者、レポートファイル、またはクラスター内の採点ジョブの結果から
help-class-report--state-dir = クラスのディレクトリ: クラスのすべての受講者を今採点します（レポートファイルも --job も指定しないときの既定）
help-class-report--files = レポートファイル: 受講者ごとの `check --format json`（ファイル名、`report.json` ならそのディレクトリ名で受講者を名付けます）、またはクラスのレポート
help-class-report--job = deploy/kubernetes の採点の実行（NAMESPACE/NAME。採点の CronJob から作った Job）。その結果の ConfigMap（Job が消えた後も）を --kubeconfig/--context で読みます
help-class-report--lab = ラボ（既定はクラスのラボ、またはレポートのラボ）
help-class-report--format = 出力の形式: human、json、junit
help-class-kubeconfig = 受講者の kubeconfig（ファイルかシミュレーターの状態ディレクトリ）を、受講者ごとのコンテキスト（ファイル名かディレクトリ名）を持つ 1 つにまとめます。閲覧用のコンテキストは含めません
help-class-kubeconfig--inputs = 受講者の kubeconfig ファイル、または `sim up` の状態ディレクトリ
help-class-kubeconfig--name = 受講者の名前。入力ごとに順に 1 回ずつ指定します（既定はファイル名かディレクトリ名）
help-class-kubeconfig--output = まとめた kubeconfig を標準出力ではなくこのファイルに書き込みます（モード 0600）
help-class-serve-shared = DIR に記録したクラスのすべての受講者を、記録したポートでこのプロセスで提供します（`class up --processes shared` が実行するもの）
help-class-serve-shared--state-dir = クラスのディレクトリ
help-completions = シェルの補完スクリプトを表示します
help-completions--shell = シェル

## ヘルプに clap が書く言葉 (src/cli/help.rs)
help-heading-usage = 使い方:
help-heading-commands = コマンド
help-heading-arguments = 引数
help-heading-options = オプション
help-heading-exit-codes = 終了コード:
help-with-notes = { $help }{ $notes }
help-note-values = （値: { $values }）
help-note-default = （既定値: { $value }）
help-note-env = （環境変数: { $name }）
help-note-aliases = （別名: { $aliases }）
help-builtin-help = ヘルプを表示します
help-builtin-help-summary = ヘルプを表示します（'--help' で詳しく表示します）
help-builtin-help-long = ヘルプを表示します（'-h' で要約を表示します）
help-builtin-version = バージョンを表示します
help-builtin-help-command = このヘルプ、または指定したサブコマンドのヘルプを表示します
help-builtin-help-command-arg = ヘルプを表示するサブコマンド

## 終了コード (src/exit.rs)
exit-code-ok = すべて合格、または完了
exit-code-checks-failed = 不合格のチェックがあります（status では、ラボが開始されていないか、開始が終わっていません）
exit-code-bad-input = 入力の誤り（コマンドラインの使い方、ラボのバンドル、正しくない回答、拒否された start）
exit-code-cluster-error = クラスターに接続できないか、API のエラーか、クラスターがラボの条件を満たしていません
exit-code-timed-out = 待機がタイムアウトしました

## clap の使い方のエラー (src/cli/usage_error.rs)
usage-try-help = 詳しくは '--help' を実行してください。
usage-tip = ヒント: { $text }
usage-unknown-argument = 引数 '{ $arg }' は使えません
usage-unknown-subcommand = サブコマンド '{ $name }' はありません
usage-value-required = '{ $arg }' には値が必要ですが、指定されていません
usage-invalid-value = '{ $arg }' に値 '{ $value }' は使えません
usage-invalid-value-because = '{ $arg }' に値 '{ $value }' は使えません: { $reason }
usage-possible-values = （使える値: { $values }）
usage-missing-arguments = 次の必須の引数が指定されていません:
usage-missing-subcommand = '{ $name }' にはサブコマンドが必要ですが、指定されていません
usage-possible-subcommands = （サブコマンド: { $values }）
usage-too-many-values = '{ $arg }' の値 '{ $value }' は余分です。これ以上の値は指定できません
usage-too-few-values = '{ $arg }' には値が { $count } 個必要ですが、{ $given } 個しか指定されていません
usage-wrong-number-of-values = '{ $arg }' には値が { $count } 個必要ですが、{ $given } 個指定されました
usage-no-equals = '{ $arg }' に値を渡すには等号（=）が必要です
usage-invalid-utf8 = 引数に UTF-8 として正しくないものがあります
usage-subject-argument = 引数 '{ $name }'
usage-subject-subcommand = サブコマンド '{ $name }'
usage-argument-repeated = { $subject } は 1 回しか指定できません
usage-conflict = { $subject } は '{ $other }' と一緒には使えません
usage-conflict-list = { $subject } は次の引数と一緒には使えません:
usage-conflict-unnamed = { $subject } は、指定したほかの引数と一緒には使えません
usage-other = 「{ $text }」
usage-reason-other = 「{ $text }」
usage-similar-subcommand = { $count ->
   *[other] 似た名前のサブコマンドがあります: { $names }
}
usage-similar-argument = { $count ->
   *[other] 似た名前の引数があります: { $names }
}
usage-similar-value = { $count ->
   *[other] 似た値があります: { $names }
}
usage-tip-pass-as-value = '{ $value }' を値として渡すには '{ $usage }' と書いてください
usage-tip-remove-dashes = サブコマンド '{ $subcommand }' があります。使うには前の '--' を取り除いてください
usage-tip-exists = '{ $usage }' があります
value-not-a-whole-number = 0 から { $max } までの整数を指定してください
value-not-a-number = 数を指定してください
value-not-a-duration = 数に s、m、h を付けて指定してください（30s、2m など）
value-not-a-listen-address = IP:PORT（0.0.0.0:6443 など）か IP を指定してください
value-not-a-socket-address = IP:PORT（127.0.0.1:8420 など）を指定してください

## 時間の長さ (src/i18n/mod.rs)
duration-s = { $s } 秒
duration-m = { $m } 分
duration-m-s = { $m } 分 { $s } 秒
duration-h = { $h } 時間
duration-h-m = { $h } 時間 { $m } 分
duration-d = { $d } 日
duration-d-h = { $d } 日 { $h } 時間

## 外から来る言葉: OS のエラーは種類を日本語で示して元のテキストを引用し、ライブラリのテキストは引用する
## (src/i18n/outside.rs)
os-error = { $kind }（「{ $text }」）
quoted-text = 「{ $text }」
os-not-found = ファイルまたはディレクトリがありません
os-permission-denied = 権限がありません
os-connection-refused = 接続が拒否されました
os-connection-reset = 接続がリセットされました
os-connection-aborted = 接続が中断されました
os-not-connected = 接続されていません
os-host-unreachable = ホストに到達できません
os-network-unreachable = ネットワークに到達できません
os-address-in-use = アドレスは使用中です
os-address-not-available = このアドレスは使えません
os-broken-pipe = パイプが切断されました
os-already-exists = すでに存在します
os-timed-out = タイムアウトしました
os-unexpected-eof = データが途中で終わっています
os-invalid-data = データが正しくありません
os-is-a-directory = ディレクトリです
os-not-a-directory = ディレクトリではありません
os-directory-not-empty = ディレクトリが空ではありません
os-read-only-filesystem = 読み取り専用のファイルシステムです
os-storage-full = デバイスに空き容量がありません
os-out-of-memory = メモリが足りません
kube-status = `{ $message }`（{ $code }）
value-none = なし

## シミュレーターのライフサイクル (src/sim/lifecycle/**, src/commands/sim.rs)
sim-status-pid = pid
sim-status-endpoint = エンドポイント
sim-status-uptime = 稼働時間
sim-status-kubeconfig = kubeconfig
sim-status-revision = リビジョン
sim-status-objects = オブジェクト
sim-status-no-objects = （なし）
sim-error-no-state-dir = 状態ディレクトリを決められません。LAB_RUNNER_SIM_DIR を設定するか --state-dir を指定してください
sim-error-state-dir-unwritable = 状態ディレクトリ { $dir } に書き込めません: { $reason }
sim-error-port-in-use = { $ip } のポート { $port } はすでに使われています。--port か --listen で別のポートを選ぶか、ポートを省略して空いているものを使ってください
sim-error-bind = { $addr } で待ち受けられません: { $reason }
sim-error-already-running = { $dir } のシミュレーターはすでに実行中です（pid { $pid }、{ $endpoint }）。`lab-runner sim down` で停止してください
sim-error-already-running-unknown = { $dir } のシミュレーターはすでに実行中です（pid { $pid }）。`lab-runner sim down` で停止してください
sim-error-no-state = { $dir } にシミュレーターの状態がありません。先に `lab-runner sim up` か `sim serve` で起動してください
sim-error-not-running = { $dir } のシミュレーターは実行されていません（pid ファイルがありません）。`lab-runner sim up` で起動します
sim-error-stale-pid-file = { $dir } のシミュレーターは実行されていません。pid ファイルにあるプロセス { $pid } はもうありません（古い pid ファイルを削除しました）
sim-error-topology = トポロジー { $at }: { $reason }
sim-error-topology-config = トポロジー: { $reason }
sim-error-controllers = コントローラー: { $reason }
sim-error-store = ストア { $path }: { $reason }
sim-error-certificate = 証明書（{ $what }）: { $reason }
sim-error-tls = TLS の設定: { $reason }
sim-error-random = トークンを生成できません。システムの乱数生成器が失敗しました
sim-error-spawn = `{ $program } sim serve` を起動できません: { $reason }
sim-error-server-exited = シミュレーターが起動中に終了しました: { $reason }
sim-error-server-exited-silently = シミュレーターが起動中に終了しました（{ $status }）。{ $log } を確認してください
sim-error-start-timed-out = シミュレーターが { $seconds } 秒以内に応答しませんでした（{ $log } を確認してください）
sim-error-stop-timed-out = シミュレーターのプロセス { $pid } が SIGTERM の後 { $seconds } 秒以内に終了しませんでした
sim-error-signal = シミュレーターのプロセス { $pid } にシグナルを送れません: { $reason }
sim-error-unreachable = シミュレーターのプロセス { $pid } は動いていますが、{ $endpoint } が応答しません: { $reason }
sim-error-serve = 提供中に失敗しました: { $reason }
error-file = { $path }: { $reason }
error-labs-dir-missing = --labs { $dir }: ディレクトリではありません
error-report = レポートを書き出せません: { $reason }
error-output = 出力を書き込めません: { $reason }

## labs list と labs show (src/lab/show.rs)
labs-none-built-in = このバイナリにはラボが組み込まれていません。--labs DIR でディレクトリからラボのバンドルを読み込めます。
labs-none-in-dir = { $dir } にラボのバンドルはありません。
labs-course = コース: { $title }
labs-column-title = タイトル
labs-column-tasks = タスク
labs-column-points = 点数
labs-not-in-course = { $mark } コースに含まれていないラボ（{ $file }）
labs-course-missing = { $at }: コースに "{ $lab }" がありますが、そのラボのバンドルはありません（`lab-runner lint` で確認できます）
labs-variant-heading = バリアント { $variant }（講師向け）:
labs-quiz-answers-variantless = クイズの正解（講師向け）:
labs-quiz-answers = このバリアントでのクイズの正解:
labs-answer-recorded = start が記録した値: { $fact }
labs-answers = { $answers }
labs-shortcuts = ショートカット（どれも合格しないことを selftest が確かめます）:
labs-solutions = ほかの正しい解き方（それぞれ合格することを selftest が確かめます）:
labs-stages = ステージ:
labs-variants = バリアント（既定は --seed から選びます）:
labs-tasks = タスク（{ $points } 点）:
labs-kind-task = タスク
labs-kind-quiz = クイズ
labs-task = { $task }（{ $kind }、{ $points } 点）{ $title }
labs-needs = 前提: { $needs }
labs-apply = 適用: { $manifests }
labs-wait = 待機: { $wait }
labs-stage-variant = バリアント { $variant }: { $manifests }

## The class commands' errors (src/class/).
class-kept-listen = 受講者の kubeconfig がこのアドレスを指しているためです
class-kept-tls-san = 受講者の証明書と kubeconfig がこの名前を使っているためです
class-kept-processes = `class down --purge` でクラスを終えるまで変わらないためです
class-kept-variants = 受講者のバリアントはこの値から選ばれたためです（次のラボには `class start LAB` で --seed か --variant を指定できます）
class-error-learner-count = --learners { $asked }: クラスの受講者は 1 人から { $max } 人までです
class-error-needs-learners = { $dir } にはまだクラスがありません。作成するには --learners N を指定してください
class-error-fewer-learners = --learners { $asked }: クラスには受講者が { $recorded } 人いて、全員を残します（クラスを終えるには `class down --purge`）
class-error-differs = { $option } { $asked }: クラスは { $recorded } で作成されています。{ $why }
class-error-other-lab = --lab { $asked }: クラスでは { $running } を実行しています。{ $asked } に移るには `lab-runner class start { $asked }` を実行してください
class-error-port-range = --listen { $addr }: 受講者 { $learners } 人にはポート { $first } から { $last } が必要ですが、65535 を超えます
class-error-needs-tls-san = --listen { $ip }: ループバック以外のアドレスには --tls-san NAME が必要です（受講者がこのホストに接続するときのホスト名か IP で、kubeconfig と証明書に使います）
class-error-port-in-use = --listen: ポート { $port }（受講者 { $learner }）は使用中です: { $reason }
class-error-unknown-learner = クラスに受講者 { $name } はいません（受講者: { $known }）
class-error-no-learner-named = 受講者の名前（例: learner-03）か `all` を指定してください
class-error-learner-down = { $learner } は停止しています。先に `lab-runner class restart { $learner }` を実行してください
class-error-locked-by = { $dir } は `{ $command }`（pid { $pid }、{ $since } から）が使用中です。終わるまで待つか、そのプロセスを停止してください
class-error-locked = { $dir } は別の lab-runner class コマンドが使用中です
class-error-older-class-running = { $dir } のクラスは古い lab-runner で起動されていて、まだ動いています。`lab-runner class down --state-dir { $dir }` を実行してから、もう一度起動してください
class-error-no-class = { $dir } にクラスはありません。`lab-runner class up --state-dir { $dir }` で作成してください
class-error-learner = { $learner }: { $reason }
class-error-interrupted = class up を中断しました。起動した受講者 { $count } 人を停止しました。残りはクラスの記録に残っています
class-error-no-lab = { $dir } のクラスにはまだラボがありません。`lab-runner class start LAB --state-dir { $dir }` を実行するか、--lab でラボを指定してください
class-error-runtime = ランタイムを起動できません: { $reason }
class-error-newer-record = 記録のバージョン { $version } は新しい lab-runner が書いたものです（この lab-runner が読めるのは 1 と 2 です）
class-board-error-bind = --listen { $addr } で待ち受けできません: { $reason }
class-board-error-needs-token = --listen { $addr }: 他のホストから接続できるボードには全受講者の作業が表示されるため、--token が必要です（任意の秘密の文字列か、起動時に表示させる `--token generate`）
class-board-error-token = トークンを作成できません: { $reason }
class-board-error-no-contexts = { $path }: 採点するコンテキストがありません
class-board-error-serve = ボードのサーバーが停止しました: { $reason }
class-board-url = { $lab } のクラスボード: { $url }
class-report-error-not-a-report = { $path }: lab-runner のレポート（check --format json）ではありません: { $reason }
class-report-error-mixed-labs = レポートの採点対象のラボが異なります（{ $first } と { $other }）。1 つのラボのファイルを指定してください
class-report-error-job-name = --job { $given }: NAMESPACE/NAME の形で指定してください（例: lab-class/grade）
class-report-error-no-job = ジョブ { $namespace }/{ $name } はコンテキスト { $context } になく、その結果もありません。`kubectl -n { $namespace } create job { $name } --from=cronjob/grade` で採点を実行してください
class-report-error-nothing = レポートがありません。--state-dir DIR、レポートファイル、--job NAMESPACE/NAME のいずれかを指定してください
class-state-up = 起動中
class-state-down = 停止
class-state-gone = 消失
action-read-job-results = Job { $job } の結果の読み取り

## The class board's page (src/class/board/page.html); its script fills `%n` in.
board-page-title = クラスボード
board-page-learner = 受講者
board-page-score = 得点
board-page-unchanged = 変化なし
board-page-stalled = 停滞
board-page-stalled-title = しばらく判定が変わっていません
board-page-finished = 完了
board-page-evidence = 根拠
board-page-connecting = 接続中…
board-page-waiting = 全受講者を採点中…
board-page-offline = 接続が切れました。再接続中…
board-page-checked = 最終採点：
board-page-round = （{ $n } 回目の更新）
board-page-down = 採点できません：
board-page-error = このクラスターを採点できません
board-page-english = English
board-page-japanese = 日本語

## How evidence names an object (src/grade/observed.rs `describe`).
object-node = ノード { $name }
object-of-kind = { $object }
object-unnamed = 名前のない { $kind }
