import Foundation
import HybridInferenceCore
import HybridInferenceGemini
import HybridInferenceLlama
import HybridInferenceOpenAI
import HybridInferenceRemote

/// The tools `hybrid-chat --tool NAME` can give the model, to demonstrate
/// the session's tool loop on either model.
public enum BuiltInTool: String, Sendable, Hashable, CaseIterable {
  /// `time`: the current date and time (`TimeTool`).
  case time

  /// The tool itself.
  public var tool: any Tool {
    switch self {
    case .time: TimeTool()
    }
  }
}

/// Reports the current date and time, in ISO 8601 with this machine's time
/// zone: something a model cannot know by itself.
public struct TimeTool: Tool {
  /// It takes no arguments.
  public struct Arguments: Generable {
    /// No arguments.
    public init() {}
  }

  /// `current_time`.
  public let name = "current_time"
  /// What the model reads.
  public let description = "The current date and time on the user's machine (ISO 8601, with the time zone)."

  /// A time tool reading `now` (the clock by default).
  public init(now: @escaping @Sendable () -> Date = Date.init) {
    self.now = now
  }

  private let now: @Sendable () -> Date

  /// The time now, such as `2025-10-26T11:04:05+01:00 (Europe/Paris)`.
  public func call(arguments: Arguments) async throws -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = .current
    return "\(formatter.string(from: now())) (\(TimeZone.current.identifier))"
  }
}
