import Foundation
import XCTest

/// Runs one test of this test binary in a child process, for input that once
/// trapped (an `Int32(...)` of `.max`, an overflowing sum): a trap in the
/// child is a failed assertion in the parent, not the end of the test run.
enum ChildProcess {
  /// The environment variable that tells a child test it is the child.
  static let marker = "HYBRID_TEST_CHILD"

  /// Whether this process is a child started by `run`; scenario tests skip otherwise.
  static var isChild: Bool { ProcessInfo.processInfo.environment[marker] == "1" }

  /// Runs `test` (`Class/testMethod`) in a child with `environment` added,
  /// and asserts it exited normally with status 0: no signal, no failed assertion.
  static func assertPasses(
    _ test: String, environment: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line
  ) throws {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = ["HybridInferenceTests.\(test)"]
    child.environment = ProcessInfo.processInfo.environment.merging(environment.merging([marker: "1"]) { $1 }) {
      $1
    }
    let output = Pipe()
    child.standardOutput = output
    child.standardError = output
    try child.run()
    let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    child.waitUntilExit()
    XCTAssertEqual(
      child.terminationReason, .exit,
      "\(test) died of signal \(child.terminationStatus):\n\(log.suffix(3000))", file: file, line: line)
    XCTAssertEqual(child.terminationStatus, 0, "\(test) failed:\n\(log.suffix(3000))", file: file, line: line)
    XCTAssertTrue(
      log.contains("Executed 1 test, with 0 failures"), "\(test) did not run:\n\(log.suffix(3000))", file: file,
      line: line)
    XCTAssertFalse(log.contains("skipped"), "\(test) was skipped:\n\(log.suffix(3000))", file: file, line: line)
  }
}
