# lab-runner の表示文（日本語）。en.ftl と同じ id と同じプレースホルダーを持つ
# （src/i18n/mod.rs のテストが確かめる）。コマンドと Kubernetes 自身のメッセージは
# バッククォートか引用符で示し、判定コード（PASS、FAIL、BLOCKED、ERROR）と列名は訳さない。

## check のレポート (src/report/mod.rs)
report-hint = ヒント { $tier }: { $text }
report-score = 得点 { $score }/{ $total }
report-stuck = 行き詰まったら: lab-runner check { $lab } --hint 1

## check --watch (src/report/live.rs, src/run.rs)
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
## status (src/engine/status.rs, src/run.rs)
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

## reset の計画と実行結果 (src/engine/reset_plan.rs, src/engine/reset.rs, src/run.rs)
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

## start と answer (src/run.rs)
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
start-collision = start { $lab } は何も変更せずに中止しました: { $objects } はすでに存在し、このラボが作成したものではありません（{ $count } 件）。削除するか名前を変えるか、別のクラスタを使ってください。引き継ぐつもりなら、ラボのステージの `adopt:` に宣言してください
answer-no-task = ラボ { $lab } にタスク "{ $task }" はありません
answer-not-a-quiz = タスク { $task } はクイズではありません。`check` がクラスタから採点します
answer-not-started = ラボ { $lab } はこのクラスタで開始されていません。先に `lab-runner start { $lab }` を実行してください
answer-not-recorded = { $reason }。回答は記録していません
answer-recorded = { $task } の回答を記録しました。`lab-runner check { $lab }` で採点されます
answer-recorded-attempt = { $task } の回答を記録しました（{ $limit } 回中 { $attempt } 回目）。`lab-runner check { $lab }` で採点されます

## demo と selftest (src/demo.rs)
demo-simulator-at = シミュレーター { $endpoint }（{ $speed } 倍速）
demo-reference-solution = 模範解答をタスクごとに実行
demo-command-running = … 実行中（{ $seconds } 秒経過）
demo-command-took = … { $seconds } 秒かかりました
selftest-bad-speed = --speed { $speed }: 速度の倍率は 0 より大きい数にしてください
selftest-fixture-applied = { $dir } のオブジェクトを { $count } 個適用しました
selftest-variants-passed = selftest { $lab }: { $count } 個中 { $passed } 個のバリアントが合格

## sim (src/sim_command.rs)
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

## lint の集計 (src/run.rs)
lint-nothing = lint: 確認するラボがありません
lint-clean = lint: { $count } 個のラボに問題はありません（{ $ids }）
lint-problems = lint: { $labs } 個中 { $failing } 個のラボに { $problems } 件の問題
lint-problems-course = lint: コースファイルに { $problems } 件の問題
lint-problems-course-and-labs = lint: コースファイルと { $labs } 個中 { $failing } 個のラボに { $problems } 件の問題

## エラー (src/run.rs)
error-line = エラー: { $message }
error-kubeconfig = kubeconfig { $path } を使えません: { $reason }（`lab-runner sim up` でシミュレーションのクラスタを起動すると kubeconfig が書き出されます。別のファイルは --kubeconfig FILE で指定します）
error-unknown-context = kubeconfig { $path } にコンテキスト "{ $context }" はありません。あるコンテキスト: { $known }
error-unreachable = { $server } のクラスタ（コンテキスト { $context }）に接続できません: { $reason }。クラスタは動いていますか？（`lab-runner sim up` でシミュレーションのクラスタを起動できます）
error-variant-change = ラボ { $lab } は別のバリアントで開始されていて、その故障が適用済みです。別のバリアントで開始するとそれを置き換え、回答は消えます。続けるには --yes を付けてください（または先に `lab-runner reset { $lab }`）
error-unknown-lab = "{ $id }" という名前のラボはありません。あるラボ: { $known }
error-invalid-bundle = ラボのバンドル { $bundle } に { $count } 件の問題があります
error-invalid-course = コースファイル { $file } に { $count } 件の問題があります
error-not-a-bundle = { $path }: ラボのバンドルではありません（lab.yaml がありません）
