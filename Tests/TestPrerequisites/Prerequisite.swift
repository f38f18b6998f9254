import Foundation
import XCTest

/// What a test needs from the machine (python3, the recorded fixtures, a
/// provisioned model) and what happens when it is missing.
///
/// `XCTSkip` counts as a pass, so a skip on a CI machine that lacks a
/// prerequisite would hide a whole suite. Under `CI=true`, or under
/// `make test` (which sets `HYBRID_REQUIRE_PREREQUISITES=1`), a missing
/// prerequisite fails the test with a message naming it; elsewhere (a quick
/// `swift test` on a laptop) it skips.
public enum Prerequisite {
  /// Whether missing prerequisites fail rather than skip.
  public static var isRequired: Bool {
    let environment = ProcessInfo.processInfo.environment
    return environment["CI"] == "true" || environment["HYBRID_REQUIRE_PREREQUISITES"] == "1"
  }

  /// The error to throw when `what` is missing: it has already failed the
  /// test where prerequisites are required.
  public static func missing(_ what: String, file: StaticString = #filePath, line: UInt = #line) -> XCTSkip {
    if isRequired {
      XCTFail("missing prerequisite: \(what)", file: file, line: line)
    }
    return XCTSkip("missing prerequisite: \(what)")
  }
}
