import Foundation
import XCTest

/// A loopback port nobody listens on: bound to port 0, then closed. Only for
/// tests that need a refused connection; a server is never started on it (a
/// server chooses its own port: `LlamaServerProcess`, `GeminiServerProcess`).
func closedLoopbackPort(file: StaticString = #filePath, line: UInt = #line) throws -> Int {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard descriptor >= 0 else {
    XCTFail("socket() failed", file: file, line: line)
    throw URLError(.cannotConnectToHost)
  }
  defer { close(descriptor) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = 0
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let port = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw -> Int in
      guard bind(descriptor, raw, length) == 0, getsockname(descriptor, raw, &length) == 0 else { return 0 }
      return Int(UInt16(bigEndian: pointer.pointee.sin_port))
    }
  }
  guard port != 0 else {
    XCTFail("no free loopback port", file: file, line: line)
    throw URLError(.cannotConnectToHost)
  }
  return port
}
