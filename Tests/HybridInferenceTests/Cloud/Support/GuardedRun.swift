import Foundation
import HybridInference
import XCTest

/// How a guarded run ended (`guardedRun`): what it returned or threw, how
/// long it took, and whether the guard had to stop it.
struct GuardedOutcome<Value: Sendable>: Sendable {
  var result: Result<Value, any Error>
  var elapsed: Duration
  /// True when `body` was still running at the guard's limit and was
  /// cancelled: what was tested did not end by itself.
  var guardFired: Bool

  var error: (any Error)? {
    if case .failure(let error) = result { return error }
    return nil
  }
}

/// Runs `body` under an overall limit: past `limit` its task is cancelled,
/// so a test of something that must end by itself (a deadline, a size
/// bound) fails instead of hanging when it does not.
func guardedRun<Value: Sendable>(
  _ limit: Duration, _ body: @escaping @Sendable () async throws -> Value
) async -> GuardedOutcome<Value> {
  let started = ContinuousClock.now
  let task = Task { try await body() }
  let watchdog = Task {
    try await Task.sleep(for: limit)
    task.cancel()
    return true
  }
  let result = await task.result
  watchdog.cancel()
  let fired = (try? await watchdog.value) ?? false
  return GuardedOutcome(result: result, elapsed: ContinuousClock.now - started, guardFired: fired)
}

extension Result where Failure == any Error {
  /// The outcome of `body`, which may throw.
  init(_ body: () async throws -> Success) async {
    do {
      self = .success(try await body())
    } catch {
      self = .failure(error)
    }
  }
}

/// Reads a stream of deltas to its end, keeping only how much text came
/// (holding every delta would measure the test, not the library).
func drainedTextBytes(_ stream: ResponseDeltaStream) async throws -> Int {
  var bytes = 0
  for try await delta in stream { bytes += delta.text.utf8.count }
  return bytes
}

/// The process's peak resident memory over `body` above what it held
/// before, in bytes (Linux: the peak is reset by writing 5 to
/// /proc/self/clear_refs); 0 where it cannot be read.
func peakResidentGrowth<Value>(_ body: () async throws -> Value) async rethrows -> (Value, Int) {
  let before = HostileChild.memory("VmRSS")
  try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
  let value = try await body()
  let peak = HostileChild.memory("VmHWM")
  return (value, max(0, peak - before))
}

/// Whether `error` is `.responseTooLarge` with `limit`.
func isResponseTooLarge(_ error: (any Error)?, limit: Int) -> Bool {
  guard case .responseTooLarge(let reported)? = error as? HybridInferenceError else { return false }
  return reported == limit
}

/// Whether `error` is `.timedOut`.
func isTimedOut(_ error: (any Error)?) -> Bool {
  guard case .timedOut? = error as? HybridInferenceError else { return false }
  return true
}

/// Whether `error` is `.invalidOptions`.
func isInvalidOptions(_ error: (any Error)?) -> Bool {
  guard case .invalidOptions? = error as? HybridInferenceError else { return false }
  return true
}

/// Polls `bodiesBeingWritten` (how many endless bodies a test server still
/// writes) for a few seconds until it reads 0: a stream that ended also hung
/// up, so the server's write fails within a moment, rather than the flood
/// going on into a connection nobody reads (or one given back to the pool).
func assertWritingStops(
  file: StaticString = #filePath, line: UInt = #line, _ bodiesBeingWritten: () async throws -> Int
) async throws {
  let deadline = ContinuousClock.now + .seconds(5)
  var writing = try await bodiesBeingWritten()
  while writing != 0 && ContinuousClock.now < deadline {
    try await Task.sleep(for: .milliseconds(50))
    writing = try await bodiesBeingWritten()
  }
  XCTAssertEqual(writing, 0, "the server still writes the body of a stream that ended", file: file, line: line)
}
