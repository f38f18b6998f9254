import Foundation
import HybridInference

/// Aggregate decode speed of several sessions answering at once on one model
/// value (issue 14, goal 2): total generated tokens over the wall time, so that
/// 4 and 16 sessions compare with 1 on the same machine in the same run.
enum ConcurrentSessions {
  /// Generated tokens per second, all sessions together.
  static func aggregate(model: LocalSystemModel, sessions count: Int, tokens: Int) async throws -> Double {
    let options = HybridGenerationOptions.foundationModels(
      GenerationOptions(sampling: .greedy, maximumResponseTokens: tokens))
    let sessions = (0..<count).map { _ in GenerativeModelSession(model: model, logHandler: .silent) }
    let start = ContinuousClock.now
    let generated = try await withThrowingTaskGroup(of: Int.self) { group in
      for (index, session) in sessions.enumerated() {
        group.addTask {
          let reply = try await session.respond(
            to: "Tell me story number \(index) about a lighthouse keeper.", options: options)
          return reply.rawResponse.usageMetadata?.candidatesTokenCount ?? 0
        }
      }
      return try await group.reduce(0, +)
    }
    return Double(generated) / (ContinuousClock.now - start).seconds
  }
}
