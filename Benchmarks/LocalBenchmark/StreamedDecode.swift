import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// Streamed decode through `GenerativeModelSession.streamResponse` (a consumer
/// task per snapshot), beside `respond` and llama-bench's tg128, alternated run
/// by run so that all three see the same machine. Also counts the process's
/// context switches per generated token (getrusage: every thread).
enum StreamedDecode {
  struct Sample {
    var tokensPerSecond: Double
    var switchesPerToken: Double
    /// The prompt's tokens: llama-bench's depth for a fair tg128.
    var promptTokens = 0
  }

  static let prompt = "Write a long essay about the history of the Roman Empire."

  static func options(_ tokens: Int) -> HybridGenerationOptions {
    .foundationModels(GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
  }

  /// Tokens per second from the first snapshot to the last, through the session's stream.
  static func streamed(model: LocalSystemModel, tokens: Int) async throws -> Sample {
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    var first: ContinuousClock.Instant?
    var switches = 0
    var generated = 0
    var promptTokens = 0
    for try await snapshot in session.streamResponse(to: prompt, options: options(tokens)) {
      if first == nil {
        first = .now
        switches = contextSwitches()
      }
      generated = snapshot.rawResponse.usageMetadata?.candidatesTokenCount ?? generated
      promptTokens = snapshot.rawResponse.usageMetadata?.promptTokenCount ?? promptTokens
    }
    var result = sample(from: first, switches: switches, generated: generated)
    result.promptTokens = promptTokens
    return result
  }

  /// The same through `respond`: no consumer per token. Timed from the start
  /// of the request, less the time a one-token request takes (prefill and set-up).
  static func responded(model: LocalSystemModel, tokens: Int) async throws -> Sample {
    let session = GenerativeModelSession(model: model, logHandler: .silent)
    let start = ContinuousClock.now
    _ = try await session.respond(to: prompt, options: options(1))
    let setUp = ContinuousClock.now - start
    let again = GenerativeModelSession(model: model, logHandler: .silent)
    let switches = contextSwitches()
    let begin = ContinuousClock.now
    let response = try await again.respond(to: prompt, options: options(tokens))
    let generated = response.rawResponse.usageMetadata?.candidatesTokenCount ?? 0
    let elapsed = (ContinuousClock.now - begin - setUp).seconds
    let perToken = Double(contextSwitches() - switches) / Double(max(1, generated))
    return Sample(tokensPerSecond: Double(generated - 1) / elapsed, switchesPerToken: perToken)
  }

  private static func sample(from first: ContinuousClock.Instant?, switches: Int, generated: Int) -> Sample {
    guard let first, generated > 1 else { return Sample(tokensPerSecond: .nan, switchesPerToken: .nan) }
    let elapsed = (ContinuousClock.now - first).seconds
    let perToken = Double(contextSwitches() - switches) / Double(generated - 1)
    return Sample(tokensPerSecond: Double(generated - 1) / elapsed, switchesPerToken: perToken)
  }

  /// The CPU's name as lscpu gives it ("Model name", from /proc/cpuinfo).
  static var cpuModel: String {
    let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
    return line.flatMap { $0.split(separator: ":", maxSplits: 1).last }.map {
      $0.trimmingCharacters(in: .whitespaces)
    } ?? "unknown CPU"
  }

  /// Voluntary context switches (a thread blocked: a wake-up to come) of
  /// every thread of the process; involuntary ones measure the machine's load.
  static func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw
  }
}
