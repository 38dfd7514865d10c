package numapin.servers;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * A small page from embedded Jetty 9 (Debian's libjetty9-java), on
 * 127.0.0.1 only: {@code java -cp ... numapin.servers.HelloJetty PORT}
 * (0: any free port). Jetty's own request pool serves it, a
 * QueuedThreadPool whose threads are named {@code qtp<hash>-<n>}.
 *
 * <p>Prints {@code ready port=P pid=N} once it accepts connections. On
 * SIGTERM or SIGINT it stops and prints {@code result requests=N}, the
 * requests it answered (the line {@code numapin groups} puts in its table).
 */
public final class HelloJetty {
    static final AtomicLong REQUESTS = new AtomicLong();

    /** Answers every GET with one short line of text. */
    public static final class Hello extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            REQUESTS.incrementAndGet();
            resp.setContentType("text/plain");
            resp.getWriter().print("hello from " + Thread.currentThread().getName() + "\n");
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].matches("[0-9]{1,5}")) {
            System.err.println("usage: HelloJetty PORT");
            System.exit(2);
        }
        Server server = new Server();
        ServerConnector http = new ServerConnector(server);
        http.setHost("127.0.0.1");
        http.setPort(Integer.parseInt(args[0]));
        server.addConnector(http);
        ServletContextHandler context = new ServletContextHandler();
        context.addServlet(new ServletHolder(new Hello()), "/*");
        server.setHandler(context);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                System.err.println("HelloJetty: stop: " + e);
            }
            System.out.println("result requests=" + REQUESTS.get());
        }, "stop"));
        server.start();
        System.out.println("ready port=" + http.getLocalPort() + " pid=" + ProcessHandle.current().pid());
        server.join();
    }
}
