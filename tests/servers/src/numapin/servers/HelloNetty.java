package numapin.servers;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

/**
 * A small HTTP server on Netty 4.1 (Debian's libnetty-java), on 127.0.0.1
 * only: {@code java -cp ... numapin.servers.HelloNetty PORT [WORKERS]}
 * (PORT 0: any free port). One boss event loop accepts connections, WORKERS
 * event loops (default: Netty's, twice the CPUs) serve them, each thread
 * named by Netty's DefaultThreadFactory: {@code nioEventLoopGroup-<pool>-<n>},
 * the boss group's pool first. An event loop answers every request itself,
 * without blocking: one busy thread per loop.
 *
 * <p>Prints {@code ready port=P pid=N} once it accepts connections. On
 * SIGTERM or SIGINT it stops and prints {@code result requests=N}.
 */
public final class HelloNetty {
    static final AtomicLong REQUESTS = new AtomicLong();

    /** Answers every request with one short line of text, keeping the connection open when asked. */
    static final class Hello extends SimpleChannelInboundHandler<HttpObject> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (!(msg instanceof HttpRequest)) {
                return;
            }
            HttpRequest req = (HttpRequest) msg;
            REQUESTS.incrementAndGet();
            byte[] body = ("hello from " + Thread.currentThread().getName() + "\n").getBytes(StandardCharsets.UTF_8);
            FullHttpResponse resp = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                    Unpooled.wrappedBuffer(body));
            resp.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain")
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
            if (HttpUtil.isKeepAlive(req)) {
                resp.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                ctx.writeAndFlush(resp);
            } else {
                ctx.writeAndFlush(resp).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2 || !args[0].matches("[0-9]{1,5}")
                || (args.length == 2 && !args[1].matches("[1-9][0-9]{0,3}"))) {
            System.err.println("usage: HelloNetty PORT [WORKERS]");
            System.exit(2);
        }
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = args.length == 2 ? new NioEventLoopGroup(Integer.parseInt(args[1]))
                : new NioEventLoopGroup();
        ServerBootstrap b = new ServerBootstrap().group(boss, workers).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new Hello());
                    }
                });
        Channel server = b.bind("127.0.0.1", Integer.parseInt(args[0])).sync().channel();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close().syncUninterruptibly();
            boss.shutdownGracefully(0, 5, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            workers.shutdownGracefully(0, 5, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            System.out.println("result requests=" + REQUESTS.get());
        }, "stop"));
        int port = ((java.net.InetSocketAddress) server.localAddress()).getPort();
        System.out.println("ready port=" + port + " pid=" + ProcessHandle.current().pid());
        server.closeFuture().sync();
    }
}
