/// A conversation with a model: one request at a time, every turn remembered.
///
/// The model can be one backend (`LocalSystemModel`, `CloudGeminiModel`) or a
/// `HybridModel` that routes each request between two. The session keeps the
/// transcript and hands all of it to whichever model answers, so a fallback
/// in the middle of a conversation carries the conversation with it.
public final class GenerativeModelSession: Sendable {
  /// The model the session asks.
  public let model: any LanguageModel
  private let logHandler: LogHandler
  private let storage = SessionStorage()
  private let state: Locked<State>

  private struct State {
    var transcript: Transcript
    var activeRequest: UInt64?
    var requestCount: UInt64 = 0
  }

  /// A session on `model`.
  /// - Parameters:
  ///   - instructions: System instructions, sent before every turn.
  ///   - logHandler: Where fallbacks are reported; one line on stderr by default.
  public init(
    model: some LanguageModel, instructions: String? = nil,
    logHandler: LogHandler = .standardError
  ) {
    self.model = model
    self.logHandler = logHandler
    self.state = Locked(State(transcript: Transcript(instructions: instructions)))
  }

  /// The conversation so far.
  public var transcript: Transcript { state.withLock { $0.transcript } }

  /// Whether a request is in progress.
  public var isResponding: Bool { state.withLock { $0.activeRequest != nil } }

  /// Answers `prompt` in one piece and adds both to the transcript.
  ///
  /// Throws `HybridInferenceError` for every failure, and `CancellationError`
  /// when the calling task is cancelled; the transcript is unchanged then.
  public func respond(to prompt: String, options: HybridGenerationOptions = .default)
    async throws -> Response
  {
    let raw = try await exchange(prompt: prompt, options: options, schema: nil)
    return Response(content: raw.text, rawResponse: raw)
  }

  /// Sends one request and records it; a structured answer is checked
  /// against `schema` before it is recorded, so the transcript never holds
  /// an answer the caller was refused.
  func exchange(prompt: String, options: HybridGenerationOptions, schema: GenerationSchema?)
    async throws -> GenerateContentResponse
  {
    let (request, ticket) = try begin(prompt: prompt, options: options, schema: schema)
    defer { end(ticket) }
    let raw = try await model.respond(to: request)
    try Task.checkCancellation()
    if let schema { _ = try schema.check(raw.text) }
    record(raw, for: request, ticket: ticket)
    return raw
  }

  /// Answers `prompt` as snapshots of the text so far.
  ///
  /// The request starts when iteration starts; ending the iteration early
  /// cancels it. The transcript gains the turn when the stream completes.
  public func streamResponse(to prompt: String, options: HybridGenerationOptions = .default)
    -> ResponseStream
  {
    stream(prompt: prompt, options: options, schema: nil)
  }

  /// The stream behind both text and structured streaming; with a schema the
  /// complete answer is checked before it is recorded.
  func stream(prompt: String, options: HybridGenerationOptions, schema: GenerationSchema?) -> ResponseStream {
    ResponseStream { [self] in
      AsyncThrowingStream { continuation in
        let request: ModelRequest
        let ticket: UInt64
        do {
          (request, ticket) = try begin(prompt: prompt, options: options, schema: schema)
        } catch {
          continuation.finish(throwing: error)
          return
        }
        let task = Task {
          do {
            var accumulator = ResponseAccumulator()
            for try await delta in model.streamResponse(to: request) {
              accumulator.add(delta)
              if let raw = accumulator.response {
                continuation.yield(ResponseStream.Snapshot(content: raw.text, rawResponse: raw))
              }
            }
            try Task.checkCancellation()
            guard let raw = accumulator.response else {
              throw HybridInferenceError.malformedResponse("the model ended without a response")
            }
            if let schema { _ = try schema.check(raw.text) }
            record(raw, for: request, ticket: ticket)
            end(ticket)
            continuation.finish()
          } catch {
            end(ticket)
            continuation.finish(throwing: error)
          }
        }
        continuation.onTermination = { [self] _ in
          task.cancel()
          end(ticket)
        }
      }
    }
  }

  private func begin(prompt: String, options: HybridGenerationOptions, schema: GenerationSchema?) throws -> (
    ModelRequest, UInt64
  ) {
    try options.validate()
    if let error = schema?.derivationError { throw error }
    guard !prompt.isEmpty else { throw HybridInferenceError.emptyPrompt }
    let (transcript, ticket) = try state.withLock { state throws -> (Transcript, UInt64) in
      guard state.activeRequest == nil else { throw HybridInferenceError.concurrentRequests }
      state.requestCount += 1
      state.activeRequest = state.requestCount
      return (state.transcript, state.requestCount)
    }
    var requestTranscript = transcript
    requestTranscript.entries.append(.prompt(prompt))
    let request = ModelRequest(
      transcript: requestTranscript, options: options, responseSchema: schema, sessionStorage: storage,
      logHandler: logHandler)
    return (request, ticket)
  }

  /// Adds the prompt and the answer, unless the request was abandoned.
  private func record(_ raw: GenerateContentResponse, for request: ModelRequest, ticket: UInt64) {
    let content = raw.candidates.first?.content ?? Content(role: "model", parts: [])
    state.withLock { state in
      guard state.activeRequest == ticket else { return }
      state.transcript = request.transcript
      state.transcript.entries.append(.response(content, modelVersion: raw.modelVersion))
    }
  }

  private func end(_ ticket: UInt64) {
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
