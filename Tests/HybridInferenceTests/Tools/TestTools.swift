import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// Tools for the tool-loop tests, each recording what happened to it. Test target only.

/// When each call of a tool started and ended, and with which arguments.
final class ToolCallLog: Sendable {
  struct Call: Sendable {
    var arguments: String
    var start: ContinuousClock.Instant
    var end: ContinuousClock.Instant?
    var cancelled = false
  }

  private let calls = Locked<[Call]>([])

  var all: [Call] { calls.withLock { $0 } }

  func begin(_ arguments: String) -> Int {
    calls.withLock { calls in
      calls.append(Call(arguments: arguments, start: .now))
      return calls.count - 1
    }
  }

  func finish(_ index: Int, cancelled: Bool = false) {
    calls.withLock { calls in
      calls[index].end = .now
      calls[index].cancelled = cancelled
    }
  }
}

/// Arguments with one city.
struct CityArguments: Generable {
  var city: String
}

/// Reports the weather for the city, after `delay`.
struct WeatherTool: Tool {
  typealias Arguments = CityArguments
  let name = "get_weather"
  let description = "The current weather in a city."
  var delay: Duration = .zero
  let log = ToolCallLog()

  func call(arguments: CityArguments) async throws -> String {
    let index = log.begin(arguments.city)
    defer { log.finish(index) }
    if delay > .zero { try await Task.sleep(for: delay) }
    return "Sunny, 21 °C in \(arguments.city)"
  }
}

/// Throws `ToolTestError.broken`.
struct BrokenTool: Tool {
  typealias Arguments = CityArguments
  let name = "broken"
  let description = "Always fails."

  func call(arguments: CityArguments) async throws -> String {
    throw ToolTestError.broken
  }
}

enum ToolTestError: Error, Equatable {
  case broken
}

/// Waits until its task is cancelled, and records that it saw the cancellation.
struct HangingTool: Tool {
  typealias Arguments = CityArguments
  let name = "hang"
  let description = "Never returns."
  let log = ToolCallLog()

  func call(arguments: CityArguments) async throws -> String {
    let index = log.begin(arguments.city)
    do {
      while true { try await Task.sleep(for: .milliseconds(5)) }
    } catch {
      log.finish(index, cancelled: Task.isCancelled)
      throw error
    }
  }
}

/// Takes no arguments and reports a fixed time (the fixtures call `now`).
struct NowTool: Tool {
  struct Arguments: Generable {}
  let name = "now"
  let description = "The current date and time."
  let log = ToolCallLog()

  func call(arguments: Arguments) async throws -> String {
    log.finish(log.begin("{}"))
    return "2025-10-26T10:00:00Z"
  }
}

/// A call of `get_weather` for `city`, as a model would ask for it.
func weatherCall(_ city: String, id: String? = nil) -> Part.FunctionCall {
  Part.FunctionCall(id: id, name: "get_weather", args: .object(["city": .string(city)]))
}
