// What tst_globalpoolrule_catches expects the rule to refuse (never built).
// QThreadPool::globalInstance() named in a comment is allowed.
void offences()
{
    QThreadPool::globalInstance()->start([] {});
    QtConcurrent::run([] { return 1; });
    QtConcurrent::run(&compute, 1);
    QtConcurrent::mapped(items, &twice);
    QtConcurrent::run(
        [] { return 1; });
    QtConcurrent::run(fileWorkPool(), [] { return 1; }); // allowed
    QtConcurrent::run(m_pool.get(), &compute, 1); // allowed
    QtConcurrent::mapped(pool, items, &twice); // allowed
}
