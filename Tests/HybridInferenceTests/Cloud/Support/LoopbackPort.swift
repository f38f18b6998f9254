import Foundation
import OpenAIServers
import XCTest

/// A loopback port nobody listens on: bound, then closed (the launcher's
/// own free-port finder).
func closedLoopbackPort(file: StaticString = #filePath, line: UInt = #line) throws -> Int {
  do {
    return try LlamaServerProcess.freePort()
  } catch {
    XCTFail("no free loopback port: \(error)", file: file, line: line)
    throw error
  }
}
