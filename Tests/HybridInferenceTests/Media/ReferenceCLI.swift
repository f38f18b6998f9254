import Foundation
import XCTest

/// llama.cpp's llama-mtmd-cli run as the reference for the device's answers.
enum ReferenceCLI {
  /// The pinned llama-mtmd-cli now and then exits with status 0 before its
  /// log is written out (stdout empty or cut short, also from a shell): it
  /// runs until two runs print the same answer, at most 6 times, else the
  /// longest answer is taken.
  static func answer(_ executable: String, _ arguments: [String]) throws -> HubTestServer.Run {
    var answered: [HubTestServer.Run] = []
    for _ in 0..<6 {
      let run = try HubTestServer.run(executable, arguments, environment: ProcessInfo.processInfo.environment)
      guard run.status == 0 else { return run }
      // The pinned CLI logs its encoding of an image's chunk; older ones, "image decoded".
      let encoded = run.stderr.contains("encoding mtmd batch") || run.stderr.contains("image decoded")
      guard encoded, !run.stdout.isEmpty else { continue }
      if answered.contains(where: { $0.stdout == run.stdout }) { return run }
      answered.append(run)
    }
    return try XCTUnwrap(answered.max { $0.stdout.count < $1.stdout.count }, "llama-mtmd-cli never answered")
  }
}
