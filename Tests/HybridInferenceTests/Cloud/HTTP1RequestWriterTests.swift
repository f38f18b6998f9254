import Foundation
import XCTest

@testable import HybridInferenceRemote

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the HTTP/1.1 client writes, and the headers it refuses to write.
final class HTTP1RequestWriterTests: XCTestCase {
  private func text(_ request: URLRequest) throws -> String {
    String(decoding: try HTTP1RequestWriter.bytes(of: request), as: UTF8.self)
  }

  func testRequest_hasOriginFormTarget_hostContentLengthAndBody_andNoAcceptEncoding() throws {
    var request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:8080/v1/chat%20x?alt=sse&k=v")))
    request.httpMethod = "POST"
    request.httpBody = Data("{}".utf8)
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.setValue("999", forHTTPHeaderField: "Content-Length")
    let written = try text(request)
    XCTAssertTrue(written.hasPrefix("POST /v1/chat%20x?alt=sse&k=v HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), written)
    XCTAssertTrue(written.contains("Content-Type: application/json\r\n"))
    XCTAssertTrue(written.contains("Content-Length: 2\r\n"), "the writer's own length, not the header's")
    XCTAssertFalse(written.contains("999"))
    XCTAssertFalse(written.lowercased().contains("accept-encoding"))
    XCTAssertTrue(written.hasSuffix("\r\n\r\n{}"))
  }

  func testUserAndPasswordInTheURL_becomeBasicCredentials_unlessTheRequestHasItsOwn() throws {
    let url = try XCTUnwrap(URL(string: "http://user:p%40ss@127.0.0.1:1/"))
    XCTAssertTrue(try text(URLRequest(url: url)).contains("Authorization: Basic dXNlcjpwQHNz\r\n"))
    XCTAssertFalse(try text(URLRequest(url: url)).contains("user:"), "no userinfo in the target or Host")
    var own = URLRequest(url: url)
    own.setValue("Bearer k", forHTTPHeaderField: "Authorization")
    XCTAssertFalse(try text(own).contains("Basic"))
  }

  func testIPv6Host_isBracketed_andAnEmptyPathIsSlash() throws {
    let written = try text(URLRequest(url: try XCTUnwrap(URL(string: "http://[::1]:9"))))
    XCTAssertTrue(written.hasPrefix("GET / HTTP/1.1\r\nHost: [::1]:9\r\n"), written)
  }

  func testHeaderValuesWithLineBreaksOrNUL_andBadNames_areRefused() throws {
    for (name, value) in [("x-goog-api-key", "key\r\nX-Injected: 1"), ("X", "a\nb"), ("X", "a\0b"), ("Bad Name", "v")] {
      XCTAssertThrowsError(try HTTP1RequestWriter.validate(name: name, value: value), "\(name)") { error in
        guard case .invalidRequestHeader? = error as? TransportFailure else { return XCTFail("\(error)") }
      }
    }
    // Through a request: a name URLRequest keeps is refused before anything is written.
    var request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:1/")))
    request.setValue("v", forHTTPHeaderField: "Bad Name")
    XCTAssertThrowsError(try HTTP1RequestWriter.bytes(of: request))
  }

  func testProxyEnvironment_matchesLikeLibcurl() {
    XCTAssertFalse(ProxyEnvironment(proxy: nil, noProxy: nil).proxies(host: "example.com"))
    XCTAssertTrue(ProxyEnvironment(proxy: "http://proxy:3128", noProxy: nil).proxies(host: "example.com"))
    let proxied = ProxyEnvironment(proxy: "http://proxy:3128", noProxy: "localhost, .internal,10.0.0.5:80,[::1]")
    XCTAssertFalse(proxied.proxies(host: "localhost"))
    XCTAssertFalse(proxied.proxies(host: "a.b.internal"))
    XCTAssertFalse(proxied.proxies(host: "internal"))
    XCTAssertFalse(proxied.proxies(host: "10.0.0.5"))
    XCTAssertFalse(proxied.proxies(host: "::1"))
    XCTAssertTrue(proxied.proxies(host: "notinternal"))
    XCTAssertTrue(proxied.proxies(host: "127.0.0.1"))
    XCTAssertFalse(ProxyEnvironment(proxy: "http://p", noProxy: "*").proxies(host: "anything"))
  }
}
