import Foundation
import XCTest

#if canImport(Glibc)
  import Glibc
#endif

/// One HTTP/1.1 request over a fresh loopback socket, read to the server's
/// close: what a test of a server needs and a client library hides (a 302
/// not followed, a body shorter than its Content-Length, the close itself).
struct RawHTTPExchange {
  /// The status code of the answer.
  var status: Int
  /// The answer's headers, names in lower case.
  var headers: [String: String]
  /// The body bytes received before the close (or before `bodyLimit`).
  var body: [UInt8]

  /// The header `name` (any case).
  func header(_ name: String) -> String? { headers[name.lowercased()] }

  /// Why an exchange failed.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// Sends `method target` to 127.0.0.1:`port` with `Connection: close` and
  /// reads the answer until the server closes, or until `bodyLimit` body bytes
  /// have come (then closes first: for bodies without end). Reads time out
  /// after 5 s.
  static func send(
    port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], bodyLimit: Int? = nil
  ) throws -> RawHTTPExchange {
    let socket = try connectLoopback(port: port)
    defer { close(socket) }
    var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
    for (name, value) in headers { request += "\(name): \(value)\r\n" }
    request += "\r\n"
    let bytes = Array(request.utf8)
    var sent = 0
    while sent < bytes.count {
      let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard count > 0 else { throw Failure(description: "send failed: errno \(errno)") }
      sent += count
    }
    var received: [UInt8] = []
    var headEnd: Int?
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
      if count == 0 { break }
      guard count > 0 else { throw Failure(description: "recv failed: errno \(errno) after \(received.count) bytes") }
      received += buffer[0..<count]
      if headEnd == nil, let end = headEndIndex(received) { headEnd = end }
      if let headEnd, let bodyLimit, received.count - headEnd >= bodyLimit { break }
    }
    guard let headEnd else { throw Failure(description: "no complete head in \(received.count) bytes") }
    return try parse(head: received[..<headEnd], body: Array(received[headEnd...]))
  }

  private static func connectLoopback(port: Int) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(socket)
      throw Failure(description: "connect to 127.0.0.1:\(port) failed: errno \(errno)")
    }
    return socket
  }

  /// The index just past the head's blank line, if it has come.
  private static func headEndIndex(_ bytes: [UInt8]) -> Int? {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard bytes.count >= 4 else { return nil }
    for index in 0...(bytes.count - 4) where Array(bytes[index..<index + 4]) == separator {
      return index + 4
    }
    return nil
  }

  private static func parse(head: ArraySlice<UInt8>, body: [UInt8]) throws -> RawHTTPExchange {
    let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines.first?.split(separator: " ") ?? []
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
      throw Failure(description: "bad status line: \(lines.first ?? "")")
    }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return RawHTTPExchange(status: status, headers: headers, body: body)
  }
}
