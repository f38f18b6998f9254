import Foundation
import OpenAIServers
import XCTest

/// The llama-server launcher the real-server tests share: a test process
/// that dies, however it dies, must not leave a server running.
final class LlamaServerLauncherTests: XCTestCase {
  func testStop_closesThePort() async throws {
    let server = try await OpenAITestServers.llamaServer()
    XCTAssertTrue(Self.acceptsConnections(port: server.port))
    server.stop()
    XCTAssertFalse(Self.acceptsConnections(port: server.port), "the server is gone once stop() returns")
  }

  /// Each server binds a port of its own choosing (`--port 0`) and says
  /// which: servers started together cannot be handed the same one.
  func testServersStartedTogether_listenOnThePortsTheyChose() async throws {
    async let first = OpenAITestServers.llamaServer()
    async let second = OpenAITestServers.llamaServer()
    let servers = try await [first, second]
    defer { servers.forEach { $0.stop() } }
    XCTAssertNotEqual(servers[0].port, servers[1].port)
    for server in servers {
      XCTAssertGreaterThan(server.port, 0)
      XCTAssertTrue(Self.acceptsConnections(port: server.port))
    }
  }

  func testListeningPort_isReadFromTheWholeLogLine() {
    let line = "srv  main: listening on http://127.0.0.1:40123\n"
    XCTAssertEqual(LlamaServerProcess.listeningPort(inLog: "load...\n" + line + "more\n"), 40123)
    XCTAssertNil(
      LlamaServerProcess.listeningPort(inLog: "srv  main: listening on http://127.0.0.1:401"),
      "a line still being written")
    XCTAssertNil(LlamaServerProcess.listeningPort(inLog: "loading model\n"))
  }

  /// The child (`ChildProcess`) starts a server, prints its port and dies
  /// of SIGKILL, so no clean-up of its own runs.
  func testKilledTestProcess_leavesNoServerBehind() async throws {
    _ = try OpenAITestServers.requireLlamaServer()
    if ChildProcess.isChild(of: self) {
      let server = try await OpenAITestServers.llamaServer()
      FileHandle.standardError.write(Data("server port \(server.port)\n".utf8))
      kill(getpid(), SIGKILL)
      return XCTFail("the child outlived its SIGKILL")
    }
    let exit = try ChildProcess.run(self)
    let log = exit.log.suffix(2000)
    XCTAssertEqual(exit.reason, .uncaughtSignal, "the child killed itself:\n\(log)")
    let portLine = try XCTUnwrap(
      exit.log.split(separator: "\n").first { $0.hasPrefix("server port ") }, "no port in:\n\(log)")
    let port = try XCTUnwrap(Int(portLine.dropFirst("server port ".count)))
    let deadline = ContinuousClock.now + .seconds(5)
    while Self.acceptsConnections(port: port) && ContinuousClock.now < deadline {
      usleep(50_000)
    }
    XCTAssertFalse(Self.acceptsConnections(port: port), "llama-server on port \(port) outlived its test process")
  }

  static func acceptsConnections(port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}
