import Foundation
import XCTest

/// Runs a test's work in a child process, for work that once ended the
/// process (a Swift trap, a stack overflow, a C abort) or must end it (an
/// `exit` in the middle of llama.cpp's work, a SIGKILL): there it is a failed
/// assertion in the parent, not the end of the test run.
///
/// The child is this test binary started again on the same test, with
/// `HYBRID_TEST_CHILD` naming that test: `isChild(of:)` tells the test which
/// half it is. A scenario is therefore no test of its own, and an ordinary
/// run counts only the tests that assert: no scenario test passes by doing
/// nothing, and none is reported as skipped.
enum ChildProcess {
  /// The environment variable that tells a test it is its own child.
  static let marker = "HYBRID_TEST_CHILD"

  /// How a child ended, and what it wrote to stdout and stderr.
  struct Exit {
    var reason: Process.TerminationReason
    var status: Int32
    var log: String
  }

  /// Whether this process is the child that `test` started to run its scenario.
  static func isChild(of test: XCTestCase) -> Bool {
    ProcessInfo.processInfo.environment[marker] == identifier(of: test)
  }

  /// `Module.Class/method`: the filter that runs exactly `test`, and the
  /// marker's value in its child.
  static func identifier(of test: XCTestCase) -> String {
    let method = test.name.split(separator: ".").last.map(String.init) ?? test.name
    return "\(String(reflecting: type(of: test)))/\(method)"
  }

  /// Starts `test`'s child, with `environment` added, its stdout and stderr
  /// both into the pipe returned.
  static func start(_ test: XCTestCase, environment: [String: String] = [:]) throws -> (Process, Pipe) {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = [identifier(of: test)]
    child.environment = ProcessInfo.processInfo.environment
      .merging(environment) { $1 }
      .merging([marker: identifier(of: test)]) { $1 }
    let output = Pipe()
    child.standardOutput = output
    child.standardError = output
    try child.run()
    return (child, output)
  }

  /// Runs `test`'s child to its end.
  static func run(_ test: XCTestCase, environment: [String: String] = [:]) throws -> Exit {
    let (child, output) = try start(test, environment: environment)
    let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    return Exit(reason: child.terminationReason, status: child.terminationStatus, log: log)
  }

  /// In `test`'s child, runs `scenario`; in the parent, runs the child and
  /// asserts it exited normally with status 0 after running that one test:
  /// no signal, no failed assertion, no skip. `environment` is read in the
  /// parent only.
  static func assertPasses(
    _ test: XCTestCase, environment: @autoclosure () throws -> [String: String] = [:], file: StaticString = #filePath,
    line: UInt = #line, _ scenario: () async throws -> Void
  ) async throws {
    if isChild(of: test) { return try await scenario() }
    let exit = try run(test, environment: environment())
    let name = identifier(of: test)
    let log = exit.log.suffix(3000)
    XCTAssertEqual(exit.reason, .exit, "\(name) died of signal \(exit.status):\n\(log)", file: file, line: line)
    XCTAssertEqual(exit.status, 0, "\(name) failed:\n\(log)", file: file, line: line)
    XCTAssertTrue(
      exit.log.contains("Executed 1 test, with 0 failures"), "\(name) did not run:\n\(log)", file: file, line: line)
    XCTAssertFalse(exit.log.contains("skipped"), "\(name) was skipped:\n\(log)", file: file, line: line)
  }
}
