"""A spider that crawls one site and lets shingled drop the copies it finds.

    PYTHONPATH=clients/python /usr/bin/python3 -m scrapy runspider \\
        clients/python/examples/dedup_spider.py -a start=http://127.0.0.1:8000/ -O pages.json

Every page it fetches is posted to the daemon at SHINGLED_URL (default 127.0.0.1:8480) into
the sweep SHINGLED_SWEEP; pages the daemon finds to be duplicates or near-duplicates of a page
it has seen are dropped, so their links are not followed. Each page it keeps is an item with
its URL, status and what the daemon said (``response.meta["shingled"]``). Any setting can be
changed with ``-s``, e.g. ``-s SHINGLED_DROP=duplicate`` to keep near-duplicates.

Arguments (``-a NAME=VALUE``):
    start: the first URL (required); links are followed on its host only.
    stats_file: where to write the crawl's ``shingled/*`` stats as JSON, when it ends.
"""

import json
import urllib.parse

import scrapy


class DedupSpider(scrapy.Spider):
    name = "dedup"
    custom_settings = {
        "DOWNLOADER_MIDDLEWARES": {"shingled_client.scrapy.ShingledMiddleware": 585},
        "SHINGLED_URL": "http://127.0.0.1:8480",
        "SHINGLED_SWEEP": "scrapy-example",
        "SHINGLED_DROP": ["duplicate", "near_duplicate"],
        "SHINGLED_ON_ERROR": "pass",
        "SHINGLED_TIMEOUT": 5.0,
    }

    def __init__(self, start=None, stats_file=None, **kwargs):
        super().__init__(**kwargs)
        if not start:
            raise ValueError("give the first URL: -a start=URL")
        self.start_urls = [start]
        self.allowed_domains = [urllib.parse.urlsplit(start).hostname]
        self.stats_file = stats_file

    def parse(self, response):
        yield {"url": response.url, "status": response.status,
               "shingled": response.meta.get("shingled")}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)

    def closed(self, reason):
        if self.stats_file:
            stats = {k: v for k, v in self.crawler.stats.get_stats().items()
                     if k.startswith("shingled/")}
            with open(self.stats_file, "w") as f:
                json.dump(stats, f, indent=1, sort_keys=True)
