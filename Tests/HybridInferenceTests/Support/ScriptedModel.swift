import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A model that answers from a script, for routing tests. Test target only.
final class ScriptedModel: LanguageModel {
  /// What the model does with one request.
  enum Step: Sendable {
    /// Streams these text deltas, then finishes with STOP.
    case answer([String])
    /// Throws before producing anything.
    case fail(any Error)
    /// Streams these deltas, then throws.
    case failAfter([String], any Error)
    /// Streams a delta without text (usage only), then throws.
    case failAfterMetadata(any Error)
    /// Waits until cancelled.
    case hang
    /// Streams these text deltas, then waits until cancelled.
    case answerThenHang([String])
    /// Asks for these tool calls (one delta of functionCall parts), then finishes with STOP.
    case calls([Part.FunctionCall])
    /// Streams these text deltas, then asks for these calls, then finishes with STOP:
    /// a round that says something before it calls a tool.
    case textThenCalls([String], [Part.FunctionCall])
    /// Streams these text deltas, waits until cancelled, and then goes on
    /// working (cancellation ignored) until `gate` opens: a backend whose
    /// generation takes a while to wind down.
    case answerThenLinger([String], Gate)
    /// `count` deltas of `text`, each made only when the consumer asks for it
    /// (a pull-based stream), then STOP; `pulledDeltas` counts those made.
    case pulled(count: Int, text: String)
    /// Waits `delay` (cancellable: a cancelled wait counts in
    /// `cancellations`), then streams these text deltas and STOP: a model
    /// slow to its first token.
    case delayedAnswer(Duration, [String])
    /// Streams a thought at once, then waits `delay`, then streams these
    /// text deltas and STOP.
    case thoughtThenAnswer(String, Duration, [String])
    /// Streams these text deltas, waits until `gate` opens (whatever the
    /// task's cancellation), then finishes with STOP: an answer still going.
    case answerUntilGate([String], Gate)
  }

  let modelVersion: String
  let placement: ModelPlacement
  private let state: Locked<State>

  private struct State {
    var availability: Availability
    var script: [Step]
    var requests: [ModelRequest] = []
    var cancellations = 0
    var endedGenerations = 0
    var pulledDeltas = 0
  }

  init(
    _ modelVersion: String, placement: ModelPlacement, availability: Availability = .available,
    script: [Step] = []
  ) {
    self.modelVersion = modelVersion
    self.placement = placement
    self.state = Locked(State(availability: availability, script: script))
  }

  var availability: Availability {
    state.withLock { $0.availability }
  }

  func setAvailability(_ availability: Availability) {
    state.withLock { $0.availability = availability }
  }

  func enqueue(_ steps: Step...) {
    state.withLock { $0.script.append(contentsOf: steps) }
  }

  /// Every request the model received, in order.
  var requests: [ModelRequest] { state.withLock { $0.requests } }

  /// How many requests ended by cancellation.
  var cancellations: Int { state.withLock { $0.cancellations } }

  /// How many generations have really ended (their work returned, whichever way).
  var endedGenerations: Int { state.withLock { $0.endedGenerations } }

  /// How many deltas `.pulled` steps have made so far.
  var pulledDeltas: Int { state.withLock { $0.pulledDeltas } }

  func streamResponse(to request: ModelRequest)
    -> ResponseDeltaStream
  {
    if case .unavailable(let reason) = availability {
      // Like the real backends: an unavailable model refuses before doing anything.
      return .failing(HybridInferenceError.unavailable(model: modelVersion, reason: reason))
    }
    // Like the real backends, it reads only its own half of the options.
    var seen = request
    if placement == .cloud { seen.options.foundationModels = nil } else { seen.options.gemini = nil }
    let step = state.withLock { state -> Step in
      state.requests.append(seen)
      return state.script.isEmpty ? .answer(["\(modelVersion) default"]) : state.script.removeFirst()
    }
    if case .pulled(let count, let text) = step { return pulled(count: count, text: text) }
    return .producing { continuation in
      defer { self.state.withLock { $0.endedGenerations += 1 } }
      do {
        try await self.play(step, into: continuation)
      } catch {
        if error is CancellationError { self.state.withLock { $0.cancellations += 1 } }
        throw error
      }
    }
  }

  /// A stream that makes each delta only when it is asked for.
  private func pulled(count: Int, text: String) -> ResponseDeltaStream {
    let made = Locked(0)
    return ResponseDeltaStream(
      AsyncThrowingStream(unfolding: { [self] in
        let index = made.withLock { made in
          made += 1
          return made
        }
        guard index <= count + 1 else { return nil }
        state.withLock { $0.pulledDeltas += 1 }
        return index <= count ? textDelta(text) : finalDelta()
      }))
  }

  private func play(
    _ step: Step, into continuation: ResponseDeltaStream.Continuation
  ) async throws {
    switch step {
    case .answer(let deltas):
      for delta in deltas { continuation.yield(textDelta(delta)) }
      continuation.yield(finalDelta())
    case .calls(let calls):
      continuation.yield(
        GenerateContentResponse(
          candidates: [Candidate(content: Content(role: "model", parts: calls.map { Part(functionCall: $0) }))],
          modelVersion: modelVersion))
      continuation.yield(finalDelta())
    case .textThenCalls(let deltas, let calls):
      for delta in deltas { continuation.yield(textDelta(delta)) }
      try await play(.calls(calls), into: continuation)
    case .answerThenLinger(let deltas, let gate):
      for delta in deltas { continuation.yield(textDelta(delta)) }
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
      await gate.wait()
      throw CancellationError()
    case .pulled:
      break  // streamed by `pulled(count:text:)`
    case .delayedAnswer(let delay, let deltas):
      try await Task.sleep(for: delay)
      try await play(.answer(deltas), into: continuation)
    case .answerUntilGate(let deltas, let gate):
      for delta in deltas { continuation.yield(textDelta(delta)) }
      await gate.wait()
      continuation.yield(finalDelta())
    case .thoughtThenAnswer(let thought, let delay, let deltas):
      continuation.yield(
        GenerateContentResponse(
          candidates: [Candidate(content: Content(role: "model", parts: [Part(text: thought, thought: true)]))],
          modelVersion: modelVersion))
      try await Task.sleep(for: delay)
      try await play(.answer(deltas), into: continuation)
    case .fail(let error):
      throw error
    case .failAfter(let deltas, let error):
      for delta in deltas { continuation.yield(textDelta(delta)) }
      throw error
    case .failAfterMetadata(let error):
      continuation.yield(finalDelta(finishReason: nil))
      throw error
    case .hang, .answerThenHang:
      if case .answerThenHang(let deltas) = step {
        for delta in deltas { continuation.yield(textDelta(delta)) }
      }
      while true {
        try await Task.sleep(for: .milliseconds(5))
      }
    }
  }

  private func textDelta(_ text: String) -> GenerateContentResponse {
    GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", text: text))],
      modelVersion: modelVersion)
  }

  private func finalDelta(finishReason: FinishReason? = .stop) -> GenerateContentResponse {
    GenerateContentResponse(
      candidates: finishReason.map { [Candidate(finishReason: $0)] } ?? [],
      usageMetadata: UsageMetadata(promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5),
      modelVersion: modelVersion)
  }
}

/// A one-way gate a scripted step waits at, whatever its task's cancellation.
final class Gate: Sendable {
  private let state = Locked<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  /// Lets every waiter, present and future, through.
  func open() {
    let waiters = state.withLock { state in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Returns once the gate is open (not when the task is cancelled: on purpose).
  func wait() async {
    await withCheckedContinuation { continuation in
      let isOpen = state.withLock { state in
        if !state.isOpen { state.waiters.append(continuation) }
        return state.isOpen
      }
      if isOpen { continuation.resume() }
    }
  }
}

/// Collects log records, for asserting what the library reported.
final class LogRecorder: Sendable {
  private let storage = Locked<[LogRecord]>([])

  var handler: LogHandler {
    LogHandler { record in self.storage.withLock { $0.append(record) } }
  }

  var fallbacks: [FallbackEvent] { storage.withLock { $0.compactMap(\.fallback) } }

  var records: [LogRecord] { storage.withLock { $0 } }
}

/// Errors the scripted models throw.
enum ScriptedError {
  static let offline = HybridInferenceError.offline(URLError(.cannotConnectToHost))
  static func api(_ status: Int) -> HybridInferenceError {
    .cloudAPI(CloudAPIError(httpStatus: status, status: "STATUS_\(status)", message: "scripted \(status)"))
  }
  static let decode = HybridInferenceError.generationFailed("llama_decode returned -1")
}
