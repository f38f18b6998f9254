#if os(Linux)
  import CHybridOS
  import XCTest

  @testable import HybridInferenceRemote

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Musl)
    import Musl
  #endif

  /// `EventPoll` speaks to epoll with `struct epoll_event` as Swift imports
  /// it from `sys/epoll.h`: its layout must be C's (packed on x86-64), or
  /// the kernel and Swift read each other's ids at different offsets.
  final class EventPollTests: XCTestCase {
    /// An array of events passed to `epoll_wait` is the kernel's array only
    /// when Swift's size, stride and data offset are the C compiler's.
    func testTheImportedEvent_isLaidOutAsC() {
      XCTAssertEqual(MemoryLayout<epoll_event>.size, CHybridOS_epoll_event_size)
      XCTAssertEqual(MemoryLayout<epoll_event>.stride, CHybridOS_epoll_event_size)
      XCTAssertEqual(MemoryLayout<epoll_event>.offset(of: \.data), CHybridOS_epoll_event_data_offset)
    }

    /// A pipe with a byte in it is reported with the id it was added with,
    /// all 64 bits (a misplaced field would cut or shift it), and not once
    /// it is taken out of the set.
    func testAReadablePipe_isReportedWithItsWholeID_untilRemoved() throws {
      let events = try XCTUnwrap(EventPoll())
      let pipe = try XCTUnwrap(HTTP1Poller.systemPipe())
      defer {
        _ = close(pipe.read)
        _ = close(pipe.write)
      }
      let id: UInt64 = 0xA1B2_C3D4_E5F6_0718
      XCTAssertTrue(events.add(pipe.read, id: id))
      var ids: [UInt64] = [7]
      XCTAssertTrue(events.wait(milliseconds: 0, ids: &ids))
      XCTAssertEqual(ids, [], "nothing to read yet")

      var byte: UInt8 = 1
      XCTAssertEqual(write(pipe.write, &byte, 1), 1)
      XCTAssertTrue(events.wait(milliseconds: 5_000, ids: &ids))
      XCTAssertEqual(ids, [id])

      events.remove(pipe.read)
      XCTAssertTrue(events.wait(milliseconds: 0, ids: &ids))
      XCTAssertEqual(ids, [], "still readable, but out of the set")
    }

    /// Two descriptors ready at once come back in one wait, each with its own id.
    func testTwoReadyPipes_areReportedInOneWait() throws {
      let events = try XCTUnwrap(EventPoll())
      let pipes = try [XCTUnwrap(HTTP1Poller.systemPipe()), XCTUnwrap(HTTP1Poller.systemPipe())]
      defer {
        for pipe in pipes {
          _ = close(pipe.read)
          _ = close(pipe.write)
        }
      }
      for (index, pipe) in pipes.enumerated() {
        XCTAssertTrue(events.add(pipe.read, id: UInt64(index + 1) << 40))
        var byte: UInt8 = 1
        XCTAssertEqual(write(pipe.write, &byte, 1), 1)
      }
      var ids: [UInt64] = []
      XCTAssertTrue(events.wait(milliseconds: 5_000, ids: &ids))
      XCTAssertEqual(ids.sorted(), [1 << 40, 2 << 40])
    }
  }
#endif
