/// `ContextOverflow.dropOldestTurns` at work: what a model that is allowed
/// to trim is sent, and the smaller request after it refused one as too long.
///
/// It runs where a model that is not a hybrid is asked (`ModelCall`, and the
/// session's stream), so a hybrid's own models are each trimmed for by the
/// hybrid that asks them, with the permission that hybrid passes on.
enum OverflowTrimming {
  /// A request as a model was sent it: the original with its `dropped`
  /// oldest exchanges left out.
  struct Attempt: Sendable {
    let original: ModelRequest
    let dropped: Int
    let sent: ModelRequest
  }

  /// `request` as `model` is to be sent it: with as many of the oldest
  /// exchanges left out as the session dropped for this model before (so
  /// the prefix, and the cache that reuses it, stays the same between trims).
  static func prepared(_ request: ModelRequest, for model: any LanguageModel) -> Attempt {
    guard trims(request, for: model) else { return Attempt(original: request, dropped: 0, sent: request) }
    let exchanges = Exchanges(request.transcript)
    let dropped = min(memory(of: request, for: model).count.withLock { $0 }, exchanges.droppable)
    return Attempt(original: request, dropped: dropped, sent: exchanges.request(request, dropping: dropped))
  }

  /// After `model` refused `attempt` with `contextWindowExceeded`: the
  /// attempt with more of the oldest exchanges left out, down to about half
  /// the window (logged); nil when the policy does not apply, the error is
  /// another, or nothing more can go.
  static func retry(
    after error: any Error, _ attempt: Attempt, on model: any LanguageModel
  ) async throws -> Attempt? {
    guard trims(attempt.original, for: model),
      case .contextWindowExceeded(let window, let needed)? = error as? HybridInferenceError
    else { return nil }
    // The estimate reads tool values as JSON text, recursively; a request
    // handed to a model directly has had no session's check.
    try attempt.original.transcript.checkNesting()
    let exchanges = Exchanges(attempt.original.transcript)
    guard attempt.dropped < exchanges.droppable else { return nil }
    let fewest = attempt.dropped + 1
    let dropped =
      try await counted(exchanges, attempt, from: fewest, target: max(1, window / 2), model)
      ?? exchanges.estimated(from: fewest, attempt: attempt, needed: needed, target: max(1, window / 2))
    memory(of: attempt.original, for: model).count.withLock { $0 = dropped }
    let entries = exchanges.entriesBefore(dropped)
    attempt.original.logHandler.log(
      LogRecord(
        level: .warning, category: .routing,
        message: "the transcript needs \(needed) tokens, more than the \(window) of \(model.modelVersion): "
          + "sending it without its \(dropped) oldest exchanges (\(entries) entries); the session keeps them"))
    return Attempt(
      original: attempt.original, dropped: dropped, sent: exchanges.request(attempt.original, dropping: dropped))
  }

  /// The fewest exchanges from `fewest` on whose dropping brings the prompt
  /// to `target` tokens by `model`'s own count (every one droppable when
  /// none does); nil when the model cannot count. A binary search: a
  /// handful of counts, however long the conversation.
  private static func counted(
    _ exchanges: Exchanges, _ attempt: Attempt, from fewest: Int, target: Int, _ model: any LanguageModel
  ) async throws -> Int? {
    let most = exchanges.droppable
    let request = attempt.original
    guard let smallest = try await model.promptTokenCount(for: exchanges.request(request, dropping: most)) else {
      return nil
    }
    if smallest > target { return most }
    var low = fewest
    var high = most  // dropping `high` is known to fit
    while low < high {
      let middle = low + (high - low) / 2
      let count = try await model.promptTokenCount(for: exchanges.request(request, dropping: middle)) ?? Int.max
      if count <= target { high = middle } else { low = middle + 1 }
    }
    return high
  }

  /// Whether the request may be trimmed for `model`: the policy says so,
  /// and the model is not a hybrid (which trims for its own models).
  static func trims(_ request: ModelRequest, for model: any LanguageModel) -> Bool {
    request.contextOverflow == .dropOldestTurns && !(model is HybridModel)
  }

  /// How many exchanges the session dropped for `model` last.
  private static func memory(of request: ModelRequest, for model: any LanguageModel) -> DroppedExchanges {
    request.sessionStorage.value(
      forKey: "contextOverflow|\(String(reflecting: type(of: model)))|\(model.modelVersion)"
    ) { DroppedExchanges() }
  }
}

/// The number of exchanges a session last dropped for one model. Locked
/// because `SessionStorage` hands out `Sendable` objects; a session sends
/// one request at a time, so the lock is never contended.
private final class DroppedExchanges: Sendable {
  let count = Locked(0)
}

/// A transcript cut into exchanges: each starts with a user's prompt (a user
/// entry that is not tool outputs) and holds everything up to the next, so
/// a tool call and its output are always in the same one. Entries before
/// the first prompt belong to the first exchange. The last exchange, the
/// newest prompt and its rounds so far, is never dropped.
struct Exchanges {
  /// Where each exchange after the first starts.
  private let starts: [Int]
  private let transcript: Transcript

  init(_ transcript: Transcript) {
    self.transcript = transcript
    let prompts = transcript.entries.indices.filter {
      transcript.entries[$0].role == .user && transcript.entries[$0].toolOutputs.isEmpty
    }
    starts = Array(prompts.dropFirst())
  }

  /// How many exchanges may go: all but the newest.
  var droppable: Int { starts.count }

  /// The entries in the `count` oldest exchanges.
  func entriesBefore(_ count: Int) -> Int { count == 0 ? 0 : starts[count - 1] }

  /// `request` without its `count` oldest exchanges.
  func request(_ request: ModelRequest, dropping count: Int) -> ModelRequest {
    guard count > 0 else { return request }
    var trimmed = request
    trimmed.transcript.entries = Array(transcript.entries[entriesBefore(count)...])
    return trimmed
  }

  /// For a model that cannot count: the fewest exchanges from `fewest` on
  /// whose dropping brings the estimate to `target`, the estimate being the
  /// refused attempt's `needed` tokens scaled by the length of what is kept.
  func estimated(from fewest: Int, attempt: OverflowTrimming.Attempt, needed: Int, target: Int) -> Int {
    // What each entry and those after it weigh, summed once from the end.
    var fromHere = [Double](repeating: 0, count: transcript.entries.count + 1)
    for index in transcript.entries.indices.reversed() {
      fromHere[index] = fromHere[index + 1] + Double(Self.weight(transcript.entries[index]))
    }
    let fixed = Double(
      (transcript.instructions?.utf8.count ?? 0)
        + attempt.original.tools.reduce(0) { $0 + $1.name.utf8.count + $1.description.utf8.count })
    let sent = max(1, fixed + fromHere[entriesBefore(attempt.dropped)])
    for count in fewest..<droppable
    where Double(needed) * (fixed + fromHere[entriesBefore(count)]) / sent <= Double(target) {
      return count
    }
    return droppable
  }

  /// An entry's length in bytes of what a model reads of it.
  private static func weight(_ entry: Transcript.Entry) -> Int {
    entry.content.parts.reduce(0) { total, part in
      total + (part.text?.utf8.count ?? 0)
        + (part.functionCall.map { $0.name.utf8.count + $0.argumentsJSON.utf8.count } ?? 0)
        + (part.functionResponse.map { $0.name.utf8.count + $0.outputText.utf8.count } ?? 0)
    }
  }
}
