/// A conversation with a model: one request at a time, every turn remembered.
///
/// The model can be one backend (`LocalSystemModel`, `CloudGeminiModel`) or a
/// `HybridModel` that routes each request between two. The session keeps the
/// transcript and hands all of it to whichever model answers, so a fallback
/// in the middle of a conversation carries the conversation with it.
///
/// With tools, `respond` and `streamResponse` run the loop: the model asks for
/// calls, the session runs them (the calls of one round concurrently), sends
/// their outputs back, and repeats until the model answers in text, for at
/// most `HybridGenerationOptions.maximumToolRounds` rounds of at most
/// `maximumToolCallsPerRound` calls each. The transcript
/// records every call and output as entries (`Transcript.Entry.toolCalls`,
/// `.toolOutputs`).
///
/// The fallback rule for tools: a hybrid may fall back while no tool has run
/// in the request (a device that cannot call tools for it hands the whole
/// request to the cloud). Once a tool has run, the next rounds go to the
/// model that asked for it, and a failure there is thrown instead of being
/// answered by the other model, which would repeat calls that may have had
/// effects.
public final class GenerativeModelSession: Sendable {
  /// The model the session asks.
  public let model: any LanguageModel
  /// The tools the model may call, as it sees them.
  public let tools: [ToolDeclaration]
  let runnableTools: [AnyTool]
  /// What happens when the transcript does not fit the answering model's window.
  public let contextOverflow: ContextOverflow
  private let logHandler: LogHandler
  private let storage = SessionStorage()
  /// Why a lock: the session is a `Sendable` class that any task may call;
  /// the transcript and the one active request are read and replaced in a
  /// few field accesses, never across an `await`, so an actor's hops are
  /// not needed and `transcript` stays a synchronous property.
  private let state: Locked<State>

  private struct State {
    var transcript: Transcript
    /// False for a transcript given from outside, until the first request checks it.
    var isChecked: Bool
    var activeRequest: UInt64?
    var requestCount: UInt64 = 0
  }

  /// A session on `model`.
  /// - Parameters:
  ///   - model: The model to ask: one backend, or a `HybridModel` that routes between two.
  ///   - instructions: System instructions, sent before every turn.
  ///   - tools: Tools the model may call; the session runs them. Names must be unique.
  ///   - contextOverflow: What to do when the transcript no longer fits the
  ///     answering model's window: `.fail` (the default) or `.dropOldestTurns`.
  ///   - logHandler: Where fallbacks are reported; one line on stderr by default.
  public convenience init(
    model: some LanguageModel, instructions: String? = nil, tools: [any Tool] = [],
    contextOverflow: ContextOverflow = .fail, logHandler: LogHandler = .standardError
  ) {
    self.init(
      model: model, transcript: Transcript(instructions: instructions), checked: true, tools: tools,
      contextOverflow: contextOverflow, logHandler: logHandler)
  }

  /// A session that goes on from `transcript`: a conversation saved earlier
  /// (`Transcript` is `Codable`), in this process or another, on this model
  /// or another. The transcript's instructions are the session's, and the
  /// first request sends (or, on device, renders) every turn of it.
  ///
  /// Thought signatures in it go back only to the model and server that
  /// made them (`Transcript.Entry.producer`). A transcript built in code that
  /// no session could have written (a tool output without its call) makes
  /// the first request throw `HybridInferenceError.invalidTranscript`.
  /// - Parameters:
  ///   - transcript: The conversation so far.
  ///   - tools: Tools the model may call; the session runs them. Names must be unique.
  ///   - contextOverflow: What to do when the transcript no longer fits the
  ///     answering model's window: `.fail` (the default) or `.dropOldestTurns`.
  ///   - logHandler: Where fallbacks are reported; one line on stderr by default.
  public convenience init(
    model: some LanguageModel, transcript: Transcript, tools: [any Tool] = [],
    contextOverflow: ContextOverflow = .fail, logHandler: LogHandler = .standardError
  ) {
    self.init(
      model: model, transcript: transcript, checked: false, tools: tools, contextOverflow: contextOverflow,
      logHandler: logHandler)
  }

  private init(
    model: some LanguageModel, transcript: Transcript, checked: Bool, tools: [any Tool],
    contextOverflow: ContextOverflow, logHandler: LogHandler
  ) {
    self.model = model
    self.runnableTools = tools.map { AnyTool($0) }
    self.tools = runnableTools.map(\.declaration)
    self.contextOverflow = contextOverflow
    self.logHandler = logHandler
    self.state = Locked(State(transcript: transcript, isChecked: checked))
  }

  /// The conversation so far.
  public var transcript: Transcript { state.withLock { $0.transcript } }

  /// Whether a request is in progress.
  public var isResponding: Bool { state.withLock { $0.activeRequest != nil } }

  /// Answers `prompt` in one piece and adds both to the transcript.
  ///
  /// With tools, `content` is the text of every round of the turn, joined by
  /// a blank line: an answer that says "Let me check." before it calls a tool
  /// keeps those words, as the stream shows them (see `TurnText`); the
  /// transcript holds each round's text in its own entry, and `rawResponse`
  /// is the final round's.
  ///
  /// Throws `HybridInferenceError` for every failure, and `CancellationError`
  /// when the calling task is cancelled; the transcript is unchanged then.
  public func respond(to prompt: String, options: HybridGenerationOptions = .default)
    async throws -> Response
  {
    try await respond(to: Prompt(prompt), options: options)
  }

  /// Sends one request, runs the tool rounds it takes, and records it; a
  /// structured answer is checked against `schema` before it is recorded, so
  /// the transcript never holds an answer the caller was refused.
  func exchange(prompt: Prompt, options: HybridGenerationOptions, schema: GenerationSchema?)
    async throws -> GenerateContentResponse
  {
    try await answer(prompt: prompt, options: options, schema: schema).raw
  }

  /// `exchange`, with the turn's text as the caller sees it.
  func answer(prompt: Prompt, options: HybridGenerationOptions, schema: GenerationSchema?)
    async throws -> (raw: GenerateContentResponse, text: String)
  {
    var (request, ticket) = try begin(prompt: prompt, options: options, schema: schema)
    // The backend's work has ended when `respond` returns or throws.
    defer { end(ticket) }
    var rounds = ToolRounds(tools: runnableTools, options: options)
    var text = TurnText(keepsEarlierRounds: schema == nil)
    while true {
      text.startRound()
      let raw = try await ModelCall.respond(model, to: request)
      try Task.checkCancellation()
      text.append(raw.text)
      if try await runTools(of: raw, in: &request, rounds: &rounds) { continue }
      if let schema { _ = try schema.check(raw.text) }
      record(raw, for: request, ticket: ticket)
      return (raw, text.text)
    }
  }

  /// When `raw` asks for tools (and the session has some), runs them, adds
  /// the call and its outputs to `request`, and returns true: the loop goes on.
  ///
  /// Every answer passes here before it is recorded, so a call nested deeper
  /// than `JSONValue.maximumDepth` (only an app's own `LanguageModel` can
  /// make one: the library's readers refuse such text) is `invalidToolCall`
  /// before a tool, the transcript or a backend walks it.
  func runTools(
    of raw: GenerateContentResponse, in request: inout ModelRequest, rounds: inout ToolRounds
  ) async throws -> Bool {
    let calls = raw.functionCalls
    for call in calls where call.args?.nests(deeperThan: JSONValue.maximumDepth) == true {
      throw HybridInferenceError.invalidToolCall(
        name: call.name, reason: "its arguments nest deeper than \(JSONValue.maximumDepth) levels")
    }
    guard !runnableTools.isEmpty, !calls.isEmpty else { return false }
    let content = raw.candidates.first?.content ?? Content(role: "model", parts: [])
    let outputs = try await rounds.run(calls)
    try Task.checkCancellation()
    if rounds.anyToolRan { request.route.pin() }
    request.transcript.entries.append(.response(content, modelVersion: raw.modelVersion, producer: raw.producer))
    request.transcript.entries.append(.toolOutputs(outputs))
    // The choice applies to the first round: after the outputs the model is
    // free to answer in text, or a required call would loop to the limit.
    if request.options.toolChoice.mode != .none { request.options.toolChoice = .auto }
    return true
  }

  /// Answers `prompt` as snapshots of the text so far.
  ///
  /// The request starts when iteration starts; ending the iteration early
  /// cancels it, and the session takes its next request once the backend
  /// has stopped (until then, `concurrentRequests`). The transcript gains
  /// the turn when the stream completes. With tools, every round's text
  /// shows as it comes and the next round's text extends it: snapshots never
  /// shrink, and the last equals what `respond` would return.
  public func streamResponse(to prompt: String, options: HybridGenerationOptions = .default)
    -> ResponseStream
  {
    streamResponse(to: Prompt(prompt), options: options)
  }

  /// The stream behind both text and structured streaming; with a schema the
  /// complete answer is checked before it is recorded.
  func stream(prompt: Prompt, options: HybridGenerationOptions, schema: GenerationSchema?) -> ResponseStream {
    ResponseStream { [self] in
      let (request, ticket) = try begin(prompt: prompt, options: options, schema: schema)
      return StreamedTurn(session: self, request: request, ticket: ticket, schema: schema)
    }
  }

  private func begin(prompt: Prompt, options: HybridGenerationOptions, schema: GenerationSchema?) throws -> (
    ModelRequest, UInt64
  ) {
    try options.validate()
    if let error = schema?.derivationError { throw error }
    try Self.checkTools(tools)
    try prompt.validate()
    let (transcript, ticket) = try state.withLock { state throws -> (Transcript, UInt64) in
      guard state.activeRequest == nil else { throw HybridInferenceError.concurrentRequests }
      // Once: the session itself only ever appends what a model answered.
      if !state.isChecked {
        try state.transcript.validate()
        state.isChecked = true
      }
      state.requestCount += 1
      state.activeRequest = state.requestCount
      return (state.transcript, state.requestCount)
    }
    var requestTranscript = transcript
    requestTranscript.entries.append(.prompt(prompt))
    let request = ModelRequest(
      transcript: requestTranscript, options: options, responseSchema: schema, tools: tools,
      sessionStorage: storage, logHandler: logHandler, contextOverflow: contextOverflow)
    return (request, ticket)
  }

  /// Tool names must be unique and their schemas describable: checked on
  /// every request, before anything is sent.
  private static func checkTools(_ tools: [ToolDeclaration]) throws(HybridInferenceError) {
    var seen: Set<String> = []
    for tool in tools {
      guard seen.insert(tool.name).inserted else {
        throw .invalidOptions("two tools are named \(tool.name); tool names must be unique")
      }
      if let error = tool.parameters.derivationError { throw error }
    }
  }

  /// Adds the prompt and the answer, unless the request was abandoned.
  func record(_ raw: GenerateContentResponse, for request: ModelRequest, ticket: UInt64) {
    let content = raw.candidates.first?.content ?? Content(role: "model", parts: [])
    state.withLock { state in
      guard state.activeRequest == ticket else { return }
      state.transcript = request.transcript
      state.transcript.entries.append(.response(content, modelVersion: raw.modelVersion, producer: raw.producer))
    }
  }

  /// Releases the slot `ticket` holds: the request's backend work has ended.
  func end(_ ticket: UInt64) {
    state.withLock { state in
      if state.activeRequest == ticket { state.activeRequest = nil }
    }
  }
}

extension GenerativeModelSession {
  /// A complete answer.
  public struct Response: Sendable {
    /// The answer text (thought summaries excluded).
    public let content: String
    /// The model's full response; `modelVersion` names the model that answered.
    public let rawResponse: GenerateContentResponse

    /// A response with its text and the raw response it came from.
    public init(content: String, rawResponse: GenerateContentResponse) {
      self.content = content
      self.rawResponse = rawResponse
    }
  }
}
