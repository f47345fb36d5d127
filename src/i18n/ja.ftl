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

## start と answer (src/run.rs)
start-done = { $lab } を開始しました: { $count } 個のオブジェクトを適用
start-done-variant = { $lab } を開始しました（バリアント { $variant }）: { $count } 個のオブジェクトを適用
answer-recorded = { $task } の回答を記録しました。`lab-runner check { $lab }` で採点されます

## lint の集計 (src/run.rs)
lint-nothing = lint: 確認するラボがありません
lint-clean = lint: { $count } 個のラボに問題はありません（{ $ids }）
lint-problems = lint: { $labs } 個中 { $failing } 個のラボに { $problems } 件の問題
lint-problems-course = lint: コースファイルに { $problems } 件の問題
lint-problems-course-and-labs = lint: コースファイルと { $labs } 個中 { $failing } 個のラボに { $problems } 件の問題

## エラー (src/run.rs)
error-line = エラー: { $message }
