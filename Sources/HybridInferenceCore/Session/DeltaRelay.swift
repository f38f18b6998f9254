/// Passes one model's deltas on to a hybrid's caller, and keeps what a
/// hybrid's routing needs to know about them.
///
/// - Deltas without text (usage, metadata, a function call) are held back
///   until the first text or thought, so that a failure right after them can
///   still fall back (streams fall back only before the first text):
///   `deliveredText` says whether the caller
///   has seen any.
/// - With `keepsText`, the answer text so far is kept: a broken answer can be
///   continued from it on the other model (`continuesInterruptedAnswers`).
///   Without it nothing is copied.
/// - Every delta is stamped with the hybrid's routing (`fallbackReason`,
///   `continuedFrom`); a value a nested hybrid set already is kept, since it is
///   nearer the model that answered.
/// - With a seam to check (`checkingSeam(after:)`, a cloud model continuing
///   another's answer), the first words are held until it is known whether
///   they repeat the end of the text so far; a repeated overlap is dropped.
struct DeltaRelay {
  private let continuation: ResponseDeltaStream.Continuation
  private let keepsText: Bool
  var fallbackReason: FallbackReason?
  var continuedFrom: String?
  private var heldBack: [GenerateContentResponse] = []
  private var seam: SeamCheck?

  /// Whether text or a thought has reached the caller.
  private(set) var deliveredText = false
  /// The answer text that reached the caller (only with `keepsText`).
  private(set) var text = ""
  /// Whether the model asked for a function call.
  private(set) var hasFunctionCalls = false
  /// The last model name the deltas carried (the model that really answered,
  /// inside a nested hybrid).
  private(set) var modelVersion = ""

  init(
    _ continuation: ResponseDeltaStream.Continuation, keepsText: Bool, fallbackReason: FallbackReason? = nil,
    continuedFrom: String? = nil
  ) {
    self.continuation = continuation
    self.keepsText = keepsText
    self.fallbackReason = fallbackReason
    self.continuedFrom = continuedFrom
  }

  /// Holds the first words back until their overlap with the end of
  /// `earlier` is known, and drops it.
  mutating func checkSeam(after earlier: String) {
    seam = SeamCheck(earlier: earlier)
  }

  /// Whether `delta` delivers something a hedge counts as an answer: text,
  /// and, for free text, a thought or a function call too.
  static func delivers(_ delta: GenerateContentResponse, structured: Bool) -> Bool {
    if !delta.text.isEmpty { return true }
    if structured { return false }
    return !delta.thoughtText.isEmpty || !delta.functionCalls.isEmpty
  }

  mutating func add(_ delta: GenerateContentResponse) {
    var delta = delta
    if delta.fallbackReason == nil { delta.fallbackReason = fallbackReason }
    if delta.continuedFrom == nil { delta.continuedFrom = continuedFrom }
    if !delta.modelVersion.isEmpty { modelVersion = delta.modelVersion }
    if !delta.functionCalls.isEmpty { hasFunctionCalls = true }
    if seam != nil {
      addAtSeam(delta)
      return
    }
    if deliveredText {
      yield(delta)
    } else if delta.text.isEmpty && delta.thoughtText.isEmpty {
      heldBack.append(delta)
    } else {
      deliveredText = true
      for held in heldBack { yield(held) }
      heldBack.removeAll()
      yield(delta)
    }
  }

  /// The stream has ended well: whatever was held back goes out.
  mutating func finish() {
    if var seam {
      self.seam = nil
      if let joined = seam.finish() { release(joined, seam: seam) }
    }
    for held in heldBack { yield(held) }
    heldBack.removeAll()
  }

  private mutating func addAtSeam(_ delta: GenerateContentResponse) {
    guard var seam else { return }
    if let joined = seam.add(delta) {
      self.seam = nil
      release(joined, seam: seam)
    } else {
      self.seam = seam
    }
  }

  /// Sends what the seam held: its text, overlap dropped, as one delta, then
  /// the held deltas without their answer text.
  private mutating func release(_ joined: String, seam: SeamCheck) {
    let held = seam.held
    if !joined.isEmpty {
      var first = GenerateContentResponse(
        candidates: [Candidate(content: Content(role: "model", text: joined))],
        modelVersion: held.first?.modelVersion ?? modelVersion)
      first.fallbackReason = fallbackReason
      first.continuedFrom = continuedFrom
      add(first)
    }
    for delta in held {
      var rest = delta
      rest.removeAnswerText()
      if !rest.candidates.isEmpty || rest.usageMetadata != nil || rest.promptFeedback != nil { add(rest) }
    }
  }

  private mutating func yield(_ delta: GenerateContentResponse) {
    if keepsText { text += delta.text }
    continuation.yield(delta)
  }
}

extension GenerateContentResponse {
  /// Drops the first candidate's answer text parts (thoughts and other parts stay).
  fileprivate mutating func removeAnswerText() {
    guard !candidates.isEmpty, let parts = candidates[0].content?.parts else { return }
    candidates[0].content?.parts = parts.filter { $0.text == nil || $0.thought == true }
  }
}
