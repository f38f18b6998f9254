import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// How long a cancelled request takes to stop on the device, during decode and
/// during a long prefill (where llama.cpp's abort callback stops it).
///
/// The caller's `await` returns at once; what matters is when llama.cpp has
/// stopped and the session can work again. So each figure is the time from
/// `cancel()` until a one-token request on the same session has answered,
/// printed beside what such a request takes on an idle session (the probe
/// re-reads the context after a cancel, so the two are not subtracted; the
/// test suite asserts the context's own thread idles within 100 ms).
enum Cancellation {
  static let probe = HybridGenerationOptions.foundationModels(
    GenerationOptions(sampling: .greedy, maximumResponseTokens: 1))

  static func measure(
    model: LocalSystemModel, runs: Int
  ) async throws -> (decode: Double, prefill: Double, probe: Double) {
    var decode: [Double] = []
    var prefill: [Double] = []
    let idle = GenerativeModelSession(model: model, logHandler: .silent)
    var idleProbe: [Double] = []
    for _ in 0..<runs { idleProbe.append(try await probeTime(idle)) }
    let long = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .random(top: 40, seed: 3), maximumResponseTokens: 2000))
    let longPrompt = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 300)
    for _ in 0..<runs {
      let session = GenerativeModelSession(model: model, logHandler: .silent)
      decode.append(
        try await cancelAfterFirstSnapshot(session, prompt: "Write a very long story.", options: long))
      prefill.append(try await cancelAfter(.milliseconds(200), session, prompt: longPrompt, options: long))
    }
    return (median(decode), median(prefill), median(idleProbe))
  }

  private static func probeTime(_ session: GenerativeModelSession) async throws -> Double {
    let start = ContinuousClock.now
    _ = try await session.respond(to: "Hi", options: probe)
    return (ContinuousClock.now - start).seconds * 1000
  }

  /// Cancels the stream at its first snapshot.
  private static func cancelAfterFirstSnapshot(
    _ session: GenerativeModelSession, prompt: String, options: HybridGenerationOptions
  ) async throws -> Double {
    let started = AsyncStream<Void>.makeStream()
    let task = Task {
      for try await _ in session.streamResponse(to: prompt, options: options) {
        started.continuation.yield()
      }
    }
    for await _ in started.stream { break }
    return try await timeCancellation(of: task, session)
  }

  /// Cancels `delay` into a prefill.
  private static func cancelAfter(
    _ delay: Duration, _ session: GenerativeModelSession, prompt: String, options: HybridGenerationOptions
  ) async throws -> Double {
    let task = Task { _ = try await session.respond(to: prompt, options: options) }
    try await Task.sleep(for: delay)
    return try await timeCancellation(of: task, session)
  }

  /// Milliseconds from `cancel()` until the session has answered a probe.
  private static func timeCancellation(
    of task: Task<Void, any Error>, _ session: GenerativeModelSession
  ) async throws -> Double {
    let start = ContinuousClock.now
    task.cancel()
    _ = await task.result
    _ = try await session.respond(to: "Hi", options: probe)
    return (ContinuousClock.now - start).seconds * 1000
  }
}
